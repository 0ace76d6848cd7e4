// One request or response body in the journal and the runner console. A trace part carries the
// build's terminal output, escape codes included: shown coloured as the build's trace view shows it
// (the same ansi_up set-up: text escaped so markup stays inert, no links), with a "Raw" toggle that
// shows the text as sent, its control characters made visible (␛ for ESC).
import { useMemo, useState } from 'react';
import type { BodyPreview } from '../../api/simulator.ts';
import { makeAnsi } from '../builds/useTraceTail.ts';
import { bodyText } from './bytes.ts';
import { hasEscapes, visibleControls } from './control-chars.ts';

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
        title="Show the body as sent, escape codes included (␛ is the ESC character)">
        Raw
      </button>
      {raw ? (
        <pre tabIndex={0} className="body-view" data-testid={testId} data-mode="raw">{visibleControls(text)}</pre>
      ) : (
        <pre tabIndex={0} className="body-view trace-colours" data-testid={testId} data-mode="ansi" dangerouslySetInnerHTML={{ __html: html }} />
      )}
    </div>
  );
}
