// One lifecycle for every service: the registry's order and failure rules, and the app's use of it
// (a simulator fleet still running when the server closes is stopped with it).
import { describe, expect, it } from 'vitest';
import { Services, type Service } from '../server/lifecycle.ts';
import { startServer } from './helpers/server.ts';
import { http } from './helpers/http.ts';
import type { SimulatorLifecycle } from '../server/simulator-api/service.ts';

function recorder(log: string[], name: string, fail: { start?: boolean; stop?: boolean } = {}): Service {
  return {
    name,
    start() {
      if (fail.start) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
    },
    async drain() {
      log.push(`drain ${name}`);
    },
    stop() {
      log.push(`stop ${name}`);
      if (fail.stop) throw new Error(`${name} cannot stop`);
    },
  };
}

describe('Services', () => {
  it('starts in order, drains and stops in reverse, and only what started', async () => {
    const log: string[] = [];
    const s = new Services();
    s.add(recorder(log, 'a'));
    s.add(recorder(log, 'b'));
    s.add(recorder(log, 'c', { start: true }));
    await expect(s.startAll()).rejects.toThrow('c cannot start');
    await s.drainAll();
    await s.stopAll();
    expect(log).toEqual(['start a', 'start b', 'drain b', 'drain a', 'stop b', 'stop a']);
  });

  it('a service that fails to stop does not keep the others running', async () => {
    const log: string[] = [];
    const s = new Services();
    s.add(recorder(log, 'a'));
    s.add(recorder(log, 'b', { stop: true }));
    await s.startAll();
    await expect(s.stopAll()).rejects.toThrow('b cannot stop');
    expect(log).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    // Stopped means forgotten: a second stop has nothing left to stop.
    await s.stopAll();
    expect(log).toHaveLength(4);
  });

  it('refuses two services of one name', () => {
    const s = new Services();
    s.add(recorder([], 'x'));
    expect(() => s.add(recorder([], 'x'))).toThrow('registered twice');
  });
});

describe('the app’s services', () => {
  it('registers the monitor and the simulator', async () => {
    const s = await startServer();
    try {
      expect(s.server.ctx.services.get('monitor')).toBeDefined();
      expect(s.server.ctx.services.get('simulator')).toBeDefined();
    } finally {
      await s.close();
    }
  });

  it('closing the server stops a running fleet', async () => {
    const s = await startServer();
    // Slow traces keep the fleet running until the close.
    const started = await http(`${s.url}/api/app/sim/fleet`, {
      token: s.adminToken,
      json: { runners: 2, builds: 20, behaviour: { trace_kb: 64, rate_kbps: 4, update_ms: 200, artifact_kb: 0 } },
    });
    expect(started.status).toBe(201);
    const sim = s.server.ctx.services.get<SimulatorLifecycle>('simulator')!.sim;
    expect(sim.fleet?.state).toBe('running');
    await s.close();
    expect(sim.fleet?.state).toBe('finished');
    expect(sim.fleet?.runners.every((r) => r.state === 'stopped')).toBe(true);
  });
});
