/**
 * Headless Chromium for the console's browser tests and benchmark: Debian's `chromium`
 * (CHROMIUM_PATH, default /usr/bin/chromium) driven by playwright-core — never a
 * downloaded browser build. The flags keep it off the network (this host has none) and
 * working as root.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Launches the system Chromium; throws naming the missing executable. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS, headless: true });
}
