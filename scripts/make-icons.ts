// Renders build/icon.svg to the PNG sizes electron-builder uses (it derives .ico and .icns from
// build/icon.png). Run with `npm run icons`; the outputs are committed, so packaging needs no browser.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.resolve(import.meta.dirname, '..');
const svg = fs.readFileSync(path.join(root, 'build/icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage();
  fs.mkdirSync(path.join(root, 'build/icons'), { recursive: true });
  for (const size of [16, 32, 48, 64, 128, 256, 512, 1024]) {
    await page.setViewportSize({ width: size, height: size });
    await page.setContent(`<html><body style="margin:0;background:transparent">${svg.replace('width="1024" height="1024"', `width="${size}" height="${size}"`)}</body></html>`);
    const out = size === 1024 ? path.join(root, 'build/icon.png') : path.join(root, `build/icons/${size}x${size}.png`);
    await page.screenshot({ path: out, omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
    console.log(`wrote ${path.relative(root, out)}`);
  }
} finally {
  await browser.close();
}
