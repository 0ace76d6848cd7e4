// Copying needs a secure context and the page's focus; when the browser refuses, the caller shows
// the text selected in a textarea so Ctrl+C still works.
export async function copyText(text: string): Promise<boolean> {
  try {
    if (!navigator.clipboard) return false;
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
