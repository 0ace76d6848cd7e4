// The Simulator, Runner console and Settings views' pure helpers: the fleet form's body, file
// names taken from another server's header, setting values as typed, body previews as shown.
import { describe, expect, it } from 'vitest';
import { FormError, INITIAL_FORM, startBodyOf } from '../../renderer/views/simulator/fleet-form.ts';
import { bodyText, bytes } from '../../renderer/views/simulator/bytes.ts';
import { filenameOf } from '../../renderer/api/filename.ts';
import { parsed, shown } from '../../renderer/views/settings/setting-values.ts';

describe('fleet form → StartFleet', () => {
  it('sends numbers, tags and only the checked faults at the chosen probability', () => {
    const body = startBodyOf({ ...INITIAL_FORM, runners: '3', builds: '6', tags: ' docker, ,linux ', seed: '42', trace_kb: '6', faults: { wrong_range: true, die: false, drop_trace: true }, fault_rate: '0.3' });
    expect(body).toEqual({
      runners: 3, builds: 6, seed: 42, tags: ['docker', 'linux'],
      behaviour: { trace_kb: 6, part_kb: 4, rate_kbps: 0, artifact_kb: 64, fail_rate: 0 },
      faults: { wrong_range: 0.3, drop_trace: 0.3 },
    });
  });
  it('leaves out empty fields and the target when it is this server', () => {
    const body = startBodyOf({ ...INITIAL_FORM, builds: '', seed: ' ', part_kb: '' });
    expect(body).not.toHaveProperty('builds');
    expect(body).not.toHaveProperty('seed');
    expect(body).not.toHaveProperty('target_url');
    expect(body).not.toHaveProperty('faults');
    // Runners of the fleet's project unless "Shared" is ticked.
    expect(body).not.toHaveProperty('shared');
    expect(startBodyOf({ ...INITIAL_FORM, shared: true }).shared).toBe(true);
    expect(body.behaviour).not.toHaveProperty('part_kb');
    expect(startBodyOf({ ...INITIAL_FORM, target_url: ' http://ci.example:8090 ' }).target_url).toBe('http://ci.example:8090');
  });
  it('names the field that is not a number', () => {
    expect(() => startBodyOf({ ...INITIAL_FORM, runners: '2.5' })).toThrow(FormError);
    expect(() => startBodyOf({ ...INITIAL_FORM, trace_kb: 'big' })).toThrow(/Trace size: "big" is not a number/);
  });
});

describe('file names from Content-Disposition', () => {
  it('keeps a plain name and reduces anything else to one', () => {
    expect(filenameOf('attachment; filename="jobscope-scenario.json"')).toBe('jobscope-scenario.json');
    expect(filenameOf("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.zip")).toBe('résumé.zip');
    expect(filenameOf('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(filenameOf('attachment; filename="..\\\\..\\\\boot.ini"')).toBe('boot.ini');
    expect(filenameOf('attachment; filename="%2e%2e%2f.bashrc"')).toBe('bashrc');
    expect(filenameOf('attachment; filename="a%0Ab.zip"')).toBe('ab.zip');
    expect(filenameOf('attachment; filename=".."')).toBeUndefined();
    expect(filenameOf(null)).toBeUndefined();
  });
});

describe('setting values as typed', () => {
  it('turns field text into the JSON value saved, empty meaning "remove"', () => {
    expect(parsed('int', ' 8091 ')).toBe(8091);
    expect(parsed('mb', '2.5')).toBe(2.5);
    expect(parsed('int', 'eighty')).toBe('eighty'); // the server's parser names the flag in its refusal
    expect(parsed('bool', 'true')).toBe(true);
    expect(parsed('bool', 'false')).toBe(false);
    expect(parsed('string', '')).toBeNull();
    expect(shown(null)).toBe('');
    expect(shown(false)).toBe('false');
  });
});

describe('body previews', () => {
  it('indents JSON, leaves other text alone, describes binary', () => {
    expect(bodyText({ size: 12, text: '{"id":1}', truncated: false })).toBe('{\n  "id": 1\n}');
    expect(bodyText({ size: 5, text: 'hello', truncated: false })).toBe('hello');
    expect(bodyText({ size: 9000, text: '{"cut', truncated: true })).toBe('{"cut\n… (cut; 9000 bytes in all)');
    expect(bodyText({ size: 300, base64: 'UEsDBA==', truncated: false })).toBe('[binary, 300 bytes]');
    expect(bodyText({ size: 0, truncated: false })).toBe('');
    expect([0, 1023, 2048, 5 * 1024 * 1024].map(bytes)).toEqual(['0 B', '1023 B', '2.0 KiB', '5.0 MiB']);
  });
});
