/**
 * The console's routes under `/console`. Sections are path segments, selections are search
 * params (app/search.ts). The run view and the chat page are code-split; a later section
 * (the graph editor, for example) adds one more lazy route here and one entry to the shell's
 * SECTIONS, without touching the rest.
 */
import {
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  redirect,
  type RouterHistory,
} from '@tanstack/react-router';
import { Shell } from './Shell';
import { parseChatSearch, parseDefinitionsSearch, parseEventsSearch, parseRunSearch, parseRunsSearch } from './search';
import { RunsPage } from '../runs/RunsPage';
import { DefinitionsPage } from '../definitions/DefinitionsPage';
import { parseEditorSearch } from '../editor/search';

const rootRoute = createRootRoute({ component: Shell });

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/runs' });
  },
});

export const runsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/runs',
  validateSearch: parseRunsSearch,
  component: RunsPage,
});

export const runRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/run',
  validateSearch: parseRunSearch,
  component: lazyRouteComponent(() => import('../runs/RunPage'), 'RunPage'),
});

export const definitionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/definitions',
  validateSearch: parseDefinitionsSearch,
  component: DefinitionsPage,
});

export const chatRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/chat',
  validateSearch: parseChatSearch,
  component: lazyRouteComponent(() => import('../chat/ChatPage'), 'ChatPage'),
});

export const editorRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/editor',
  validateSearch: parseEditorSearch,
  component: lazyRouteComponent(() => import('../editor/EditorPage'), 'EditorPage'),
});

export const agentsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/agents',
  component: lazyRouteComponent(() => import('../agents/AgentsPage'), 'AgentsPage'),
});

export const mcpServersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/mcp-servers',
  component: lazyRouteComponent(() => import('../mcp/McpServersPage'), 'McpServersPage'),
});

export const approvalsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/approvals',
  component: lazyRouteComponent(() => import('../runs/ApprovalsPage'), 'ApprovalsPage'),
});

export const schedulesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/schedules',
  component: lazyRouteComponent(() => import('../schedules/SchedulesPage'), 'SchedulesPage'),
});

export const eventsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/events',
  validateSearch: parseEventsSearch,
  component: lazyRouteComponent(() => import('../events/EventsPage'), 'EventsPage'),
});

export const webhooksRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/webhooks',
  component: lazyRouteComponent(() => import('../webhooks/WebhooksPage'), 'WebhooksPage'),
});

export const auditRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/audit',
  component: lazyRouteComponent(() => import('../audit/AuditPage'), 'AuditPage'),
});

export const workersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workers',
  component: lazyRouteComponent(() => import('../workers/WorkersPage'), 'WorkersPage'),
});

const routeTree = rootRoute.addChildren([
  indexRoute, runsRoute, runRoute, approvalsRoute, definitionsRoute, schedulesRoute, eventsRoute, webhooksRoute, chatRoute, editorRoute, agentsRoute, mcpServersRoute, auditRoute, workersRoute,
]);

/** The router; `history` is the browser's unless a test passes a memory history. */
export function createConsoleRouter(history?: RouterHistory) {
  return createRouter({
    routeTree,
    basepath: '/console',
    defaultPreload: 'intent',
    scrollRestoration: true,
    ...(history ? { history } : {}),
  });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
