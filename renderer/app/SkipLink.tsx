// "Skip to content": the first stop of the tab order, seen only while it has the focus, so a
// keyboard user reaches the view without tabbing through the header's links and pickers. The app
// routes on the hash, so the link moves the focus itself instead of following its href.
import type { MouseEvent } from 'react';

export const CONTENT_ID = 'content';

export function SkipLink() {
  const skip = (e: MouseEvent<HTMLAnchorElement>) => {
    e.preventDefault();
    document.getElementById(CONTENT_ID)?.focus();
  };
  return (
    <a className="skip-link" href={`#${CONTENT_ID}`} onClick={skip} data-testid="skip-link">
      Skip to content
    </a>
  );
}
