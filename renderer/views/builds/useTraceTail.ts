// Tails a build's trace: asks for the bytes after what it has (`Range: bytes=N-` → 206) until the
// build is finished and nothing new arrived. Bytes are decoded as a stream so a UTF-8 character
// split between two parts is not mangled, and one AnsiUp instance carries colour state across parts.
import { useEffect, useState } from 'react';
import { AnsiUp } from 'ansi_up';
import type { Client } from '../../api/client.ts';

export interface TraceState {
  chunks: string[]; // HTML, escaped by ansi_up (escape_html on): no markup from the trace survives
  bytes: number;
  buildStatus: string | null;
  done: boolean;
  error: string | null;
}

const POLL_MS = 700;

export function makeAnsi(): AnsiUp {
  const a = new AnsiUp();
  a.escape_html = true; // the default, set anyway: the trace is untrusted text
  a.use_classes = true; // colours from the theme's CSS, not inline styles
  // A trace is untrusted: an OSC 8 hyperlink in it could dress any URL as "Click to download fixed
  // artifacts". No scheme is allowed, and the link's text is kept as plain (still coloured) text,
  // where ansi_up would otherwise drop it.
  a.url_allowlist = {};
  const internals = a as unknown as {
    process_hyperlink(pkt: { text: string }): string;
    transform_to_html(fragment: unknown): string;
    with_state(pkt: { text: string }): unknown;
  };
  internals.process_hyperlink = (pkt) => internals.transform_to_html(internals.with_state(pkt));
  return a;
}

export function useTraceTail(client: Client, id: number): TraceState {
  const [state, setState] = useState<TraceState>({ chunks: [], bytes: 0, buildStatus: null, done: false, error: null });

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let offset = 0;
    let ansi = makeAnsi();
    let decoder = new TextDecoder('utf-8');
    setState({ chunks: [], bytes: 0, buildStatus: null, done: false, error: null });

    const tick = async () => {
      try {
        const part = await client.traceFrom(id, offset);
        if (stop) return;
        if (part.status === 416) {
          // The trace is shorter than what we showed: it was replaced (a runner's full PUT). Start over.
          offset = 0;
          ansi = makeAnsi();
          decoder = new TextDecoder('utf-8');
          setState((s) => ({ ...s, chunks: [], bytes: 0 }));
        } else {
          offset += part.bytes.length;
          const html = part.bytes.length ? ansi.ansi_to_html(decoder.decode(part.bytes, { stream: true })) : '';
          const finished = part.buildStatus !== null && part.buildStatus !== 'running' && part.buildStatus !== 'pending';
          const done = finished && part.bytes.length === 0;
          setState((s) => ({ chunks: html ? [...s.chunks, html] : s.chunks, bytes: offset, buildStatus: part.buildStatus, done, error: null }));
          if (done) return;
        }
      } catch (e) {
        if (stop) return;
        setState((s) => ({ ...s, error: (e as Error).message }));
      }
      if (!stop) timer = setTimeout(tick, POLL_MS);
    };
    void tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [client, id]);

  return state;
}
