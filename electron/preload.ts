// Runs sandboxed before the page: exposes exactly the JobscopeBridge as window.jobscope, each member
// an IPC call the main process validates. No Node, no ipcRenderer, nothing else reaches the page.
import { contextBridge, ipcRenderer } from 'electron';
import { IPC, type JobscopeBridge } from './bridge-types.ts';

const bridge: JobscopeBridge = {
  getBackend: () => ipcRenderer.invoke(IPC.backend),
  notify: (title, body) => ipcRenderer.invoke(IPC.notify, String(title), String(body)),
  saveFile: (opts) => ipcRenderer.invoke(IPC.saveFile, opts),
  openFile: (opts) => ipcRenderer.invoke(IPC.openFile, opts ?? {}),
};

contextBridge.exposeInMainWorld('jobscope', bridge);
