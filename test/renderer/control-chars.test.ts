// The body view's control characters: which bodies are shown coloured, and what Raw shows.
import { describe, expect, it } from 'vitest';
import { controlParts, hasEscapes } from '../../renderer/views/simulator/control-chars.ts';

describe('control characters in a body', () => {
  it('a body with ESC has escape codes; plain text does not', () => {
    expect(hasEscapes('\u001b[31mred\u001b[0m')).toBe(true);
    expect(hasEscapes('plain [31m text\n')).toBe(false);
  });

  it('Raw names ESC and other controls, keeps newlines and tabs in the text', () => {
    expect(controlParts('\u001b[31mred\u001b[0m\tx\r\n\u0007\u007f')).toEqual([
      { control: 'ESC', code: 0x1b }, '[31mred', { control: 'ESC', code: 0x1b }, '[0m\tx', { control: 'CR', code: 13 }, '\n', { control: 'BEL', code: 7 }, { control: 'DEL', code: 0x7f },
    ]);
    expect(controlParts('plain')).toEqual(['plain']);
    expect(controlParts('')).toEqual([]);
  });
});
