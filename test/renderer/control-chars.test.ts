// The body view's control characters: which bodies are shown coloured, and what Raw shows.
import { describe, expect, it } from 'vitest';
import { hasEscapes, visibleControls } from '../../renderer/views/simulator/control-chars.ts';

describe('control characters in a body', () => {
  it('a body with ESC has escape codes; plain text does not', () => {
    expect(hasEscapes('\u001b[31mred\u001b[0m')).toBe(true);
    expect(hasEscapes('plain [31m text\n')).toBe(false);
  });

  it('Raw shows ESC and other controls as control pictures, keeps newlines and tabs', () => {
    expect(visibleControls('\u001b[31mred\u001b[0m\tx\r\n\u0007\u007f')).toBe('␛[31mred␛[0m\tx␍\n␇␡');
  });
});
