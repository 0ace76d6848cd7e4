// A server started by another program over an IPC channel (a test's spawn with 'ipc', a supervisor's
// fork) ends with that program: when the channel closes, the parent is gone, killed or not, and a
// server nobody can reach or stop any more would hold its port, its data dir and its database
// sessions. Started from a shell there is no channel and nothing changes.

/** Calls `onGone` once the parent's IPC channel closes; false when there is no channel to watch. */
export function whenParentGone(onGone: () => void): boolean {
  if (!process.channel) return false;
  // The channel only carries this signal: it must not keep the process alive by itself.
  process.channel.unref();
  process.once('disconnect', onGone);
  return true;
}
