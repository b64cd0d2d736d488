/**
 * The frame of every view: the left navigation (one entry per section; a later section
 * such as the graph editor adds itself to {@link SECTIONS}), the header with the tenant,
 * the key's scopes and the live channel's state, and the content.
 */
import { ThemeToggle } from '../ui/ThemeToggle';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { useSession } from '../session/session';
import { useLiveState } from '../live/connection';

interface Section {
  to: '/runs' | '/approvals' | '/definitions' | '/schedules' | '/events' | '/webhooks' | '/chat' | '/editor' | '/agents' | '/mcp-servers' | '/audit' | '/workers';
  label: string;
  icon: string;
}

/** The navigation entries, in order. */
export const SECTIONS: Section[] = [
  { to: '/runs', label: 'Runs', icon: '▤' },
  { to: '/approvals', label: 'Approvals', icon: '✓' },
  { to: '/definitions', label: 'Definitions', icon: '◇' },
  { to: '/schedules', label: 'Schedules', icon: '◷' },
  { to: '/events', label: 'Events', icon: '⚡' },
  { to: '/webhooks', label: 'Webhooks', icon: '⇲' },
  { to: '/chat', label: 'Chat', icon: '✉' },
  { to: '/editor', label: 'Editor', icon: '✎' },
  { to: '/agents', label: 'Agents', icon: '◎' },
  { to: '/mcp-servers', label: 'MCP servers', icon: '⚙' },
  { to: '/audit', label: 'Audit log', icon: '≡' },
  { to: '/workers', label: 'Workers', icon: '▦' },
];

/** What the header says of each live state: the words, the hover text, the dot's class. */
const LIVE_LABELS = {
  connected: { text: 'Live', title: 'Live updates on', cls: 'is-up' },
  reconnecting: { text: 'Reconnecting', title: 'Live channel lost, reconnecting: polling every 3 s meanwhile', cls: 'is-reconnecting' },
  down: { text: 'Polling', title: 'Live channel down: polling every 3 s', cls: 'is-down' },
} as const;

function LiveIndicator() {
  const { client } = useSession();
  const label = LIVE_LABELS[useLiveState(client)];
  return (
    <span className={`live-indicator ${label.cls}`} title={label.title}>
      <span className="live-dot" aria-hidden="true" />
      {label.text}
    </span>
  );
}

export function Shell() {
  const { me, apiKey, signOut } = useSession();
  const path = useRouterState({ select: (s) => s.location.pathname });
  const current = SECTIONS.find((s) => path.startsWith(s.to) || (s.to === '/runs' && path.startsWith('/run')));
  return (
    <div className="shell">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Sections">
        <Link to="/runs" className="brand">
          <img src={`${import.meta.env.BASE_URL}favicon.svg`} alt="" width={24} height={24} />
          <span>Flowline</span>
        </Link>
        <ul className="nav-list">
          {SECTIONS.map((s) => (
            <li key={s.to}>
              <Link to={s.to} className={`nav-item${current?.to === s.to ? ' is-active' : ''}`} aria-current={current?.to === s.to ? 'page' : undefined}>
                <span className="nav-icon" aria-hidden="true">
                  {s.icon}
                </span>
                {s.label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="sidebar-foot">
          <a href="/docs">API reference</a>
        </div>
      </nav>
      <div className="main">
        <header className="topbar">
          <span className="topbar-title">{current?.label ?? 'Console'}</span>
          <div className="topbar-right">
            <LiveIndicator />
            <ThemeToggle />
            {me.via === 'session' ? (
              <span className="tenant-chip" title={`${me.principal}${me.groups.length ? ` · groups ${me.groups.join(', ')}` : ''}`}>
                <span className="muted">signed in as</span> <strong>{me.name ?? me.principal.replace(/^user:/, '')}</strong>
              </span>
            ) : null}
            <span className="tenant-chip" title="tenant of this key">
              <span className="muted">tenant</span> <strong>{me.tenant}</strong>
            </span>
            <span className="scope-list" aria-label="scopes of this key">
              {me.scopes.map((s) => (
                <span key={s} className="scope-chip">
                  {s}
                </span>
              ))}
            </span>
            {me.authRequired ? (
              <button type="button" className="btn btn-ghost btn-sm" onClick={signOut} title={apiKey ? `key …${apiKey.slice(-4)}` : undefined}>
                Sign out
              </button>
            ) : (
              <span className="muted small" title="the server runs without API_KEYS">
                no key needed
              </span>
            )}
          </div>
        </header>
        <main id="content" className="content" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
