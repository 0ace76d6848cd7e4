// The file name a download answer suggests (Content-Disposition), reduced to a plain name: the
// header may come from another server, and a save dialog must not be handed a path.
export function filenameOf(contentDisposition: string | null | undefined): string | undefined {
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(contentDisposition ?? '');
  if (!m) return undefined;
  let name = m[1]!;
  try {
    name = decodeURIComponent(name);
  } catch {
    /* keep it as sent */
  }
  name = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').replace(/^\.+/, '').trim();
  return name || undefined;
}
