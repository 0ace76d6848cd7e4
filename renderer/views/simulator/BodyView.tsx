// One request or response body in the journal and the runner console. A trace part carries the
// build's terminal output, escape codes included: shown coloured as the build's trace view shows it
// (the same ansi_up set-up: text escaped so markup stays inert, no links), with a "Raw" toggle that
// shows the text as sent, its control characters made visible (a chip reading ESC for ESC).
import { useMemo, useState } from 'react';
import type { BodyPreview } from '../../api/simulator.ts';
import { makeAnsi } from '../builds/useTraceTail.ts';
import { bodyText } from './bytes.ts';
import { controlParts, hasEscapes } from './control-chars.ts';

// tabIndex: a long body scrolls inside its box, and a scrolling box must be reachable by keyboard.
export function BodyView({ body, testId }: { body: BodyPreview | undefined; testId?: string }) {
  const text = bodyText(body);
  const coloured = hasEscapes(text);
  const [raw, setRaw] = useState(false);
  // ansi_up with escape_html on: the only markup in this HTML is its own colour <span>s.
  const html = useMemo(() => (coloured ? makeAnsi().ansi_to_html(text) : ''), [coloured, text]);
  if (!text) return null;
  if (!coloured) return <pre tabIndex={0} className="body-view" data-testid={testId}>{text}</pre>;
  return (
    <div className="body-ansi">
      <button className="ghost small body-raw" aria-pressed={raw} onClick={() => setRaw(!raw)} data-testid="body-raw"
        title="Show the body as sent, escape codes included (ESC in a box is the escape character)">
        Raw
      </button>
      {raw ? (
        <pre tabIndex={0} className="body-view" data-testid={testId} data-mode="raw">{controlParts(text).map((p, i) => (typeof p === 'string' ? p : <abbr key={i} className="ctl-chip" title={`${p.control}, control character 0x${p.code.toString(16).toUpperCase().padStart(2, '0')}`}>{p.control}</abbr>))}</pre>
      ) : (
        <pre tabIndex={0} className="body-view trace-colours" data-testid={testId} data-mode="ansi" dangerouslySetInnerHTML={{ __html: html }} />
      )}
    </div>
  );
}
