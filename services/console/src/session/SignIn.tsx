/**
 * The sign-in page: single sign-on when the server has an issuer (`GET /auth/config`), and
 * pasting an API key; a refusal reads `code: message`. A refused single sign-on comes back
 * here with `signInError` and `reason` in the address, shown like any refusal.
 */
import { useEffect, useId, useState } from 'react';
import type { AuthConfig } from '@flowline/client';

/** The refusal a single sign-on came back with, and the address without it (where to return after signing in). */
function ssoRefusal(at: { pathname: string; search: string }): { refusal: string | null; returnTo: string } {
  const q = new URLSearchParams(at.search);
  const code = q.get('signInError');
  const reason = q.get('reason');
  q.delete('signInError');
  q.delete('reason');
  const rest = q.toString();
  return { refusal: code ? `${code}: ${reason ?? 'sign-in refused'}` : null, returnTo: `${at.pathname}${rest ? `?${rest}` : ''}` };
}

export function SignIn({ submit, refusal, busy, baseUrl = '' }: { submit(apiKey: string): Promise<void>; refusal: string | null; busy: boolean; baseUrl?: string }) {
  const [key, setKey] = useState('');
  const [auth, setAuth] = useState<AuthConfig | null>(null);
  const inputId = useId();
  const errorId = useId();
  const sso = ssoRefusal(window.location);
  // a key's refusal reads under the key; a single sign-on's under its button (or alone without one)
  const shown = refusal ?? (auth?.sso ? null : sso.refusal);
  const ssoErrorId = useId();
  useEffect(() => {
    let live = true;
    // an older server without /auth/config simply offers no single sign-on
    fetch(`${baseUrl}/auth/config`)
      .then((r) => (r.ok ? (r.json() as Promise<AuthConfig>) : null))
      .then((c) => live && setAuth(c))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [baseUrl]);
  return (
    <main className="signin">
      <form
        className="signin-card"
        aria-labelledby={`${inputId}-title`}
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) void submit(key);
        }}
      >
        <div className="brand brand-large">
          <img src={`${import.meta.env.BASE_URL}favicon.svg`} alt="" width={32} height={32} />
          <span>Flowline</span>
        </div>
        <h1 id={`${inputId}-title`}>Sign in to the console</h1>
        {auth?.sso && auth.loginUrl ? (
          <>
            <a
              className="btn btn-primary signin-sso"
              href={`${baseUrl}${auth.loginUrl}?returnTo=${encodeURIComponent(sso.returnTo)}`}
              aria-describedby={sso.refusal ? ssoErrorId : undefined}
            >
              Sign in with SSO
            </a>
            {sso.refusal ? (
              <p id={ssoErrorId} className="refusal" role="alert">
                {sso.refusal}
              </p>
            ) : null}
            <p className="muted signin-or">or with an API key</p>
          </>
        ) : null}
        <p className="muted">
          Paste an API key (an entry of the server&apos;s <code>API_KEYS</code>). It stays in this tab only and is sent as
          the bearer of every request.
        </p>
        <label htmlFor={inputId}>API key</label>
        <input
          id={inputId}
          name="apiKey"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-invalid={shown ? true : undefined}
          aria-describedby={shown ? errorId : undefined}
          autoFocus
        />
        {shown ? (
          <p id={errorId} className="refusal" role="alert">
            {shown}
          </p>
        ) : null}
        <button className="btn btn-primary" type="submit" disabled={busy || !key.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
