// Trace text is untrusted: an OSC 8 hyperlink in it must not become a link in the Build page
// (a trace could show "Click to download fixed artifacts" pointing anywhere), and neither may a plain URL.
import { describe, expect, it } from 'vitest';
import { makeAnsi } from '../../renderer/views/builds/useTraceTail.ts';

const ESC = '\u001b';
const osc8 = (url: string, text: string, st = `${ESC}\\`) => `${ESC}]8;;${url}${st}${text}${ESC}]8;;${st}`;
const visibleText = (html: string) => html.replace(/<[^>]*>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&amp;/g, '&');

describe('trace rendering makes no links', () => {
  it('an OSC 8 hyperlink renders as its plain visible text, with no <a> element', () => {
    const html = makeAnsi().ansi_to_html(`before ${osc8('https://evil.example/fix.zip', 'Click to download fixed artifacts')} after\n`);
    expect(html).not.toMatch(/<a[\s>]/i);
    expect(html).not.toContain('evil.example');
    expect(visibleText(html)).toBe('before Click to download fixed artifacts after\n');
  });

  it('also with BEL terminators, colours around it, and the sequence split across two trace parts', () => {
    const ansi = makeAnsi();
    const whole = `${ESC}[31mred ${osc8('http://evil.example/', 'link text', '\u0007')} tail${ESC}[0m\n`;
    const cut = whole.indexOf('evil') + 2;
    const html = ansi.ansi_to_html(whole.slice(0, cut)) + ansi.ansi_to_html(whole.slice(cut));
    expect(html).not.toMatch(/<a[\s>]/i);
    expect(visibleText(html)).toBe('red link text tail\n');
    expect(html).toContain('ansi-red-fg');
  });

  it('plain URLs stay text', () => {
    const html = makeAnsi().ansi_to_html('see https://example.com/x?a=1&b=2 and www.example.org\n');
    expect(html).not.toMatch(/<a[\s>]/i);
    expect(visibleText(html)).toBe('see https://example.com/x?a=1&b=2 and www.example.org\n');
  });
});
