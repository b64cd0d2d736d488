/** The sign-in page: paste an API key; a refusal reads `code: message`. */
import { useId, useState } from 'react';

export function SignIn({ submit, refusal, busy }: { submit(apiKey: string): Promise<void>; refusal: string | null; busy: boolean }) {
  const [key, setKey] = useState('');
  const inputId = useId();
  const errorId = useId();
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
          aria-invalid={refusal ? true : undefined}
          aria-describedby={refusal ? errorId : undefined}
          autoFocus
        />
        {refusal ? (
          <p id={errorId} className="refusal" role="alert">
            {refusal}
          </p>
        ) : null}
        <button className="btn btn-primary" type="submit" disabled={busy || !key.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
