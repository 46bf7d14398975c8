// Talks to watchdogd with the session cookie; changes carry the session's CSRF token.
let csrfToken = null;

export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function request(method, path, body, headers = {}) {
  const options = { method, headers: { ...headers }, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    options.body = JSON.stringify(body);
    options.headers['Content-Type'] = 'application/json';
  }
  if (method !== 'GET' && csrfToken) options.headers['X-CSRF-Token'] = csrfToken;
  const response = await fetch(path, options);
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = data?.error ?? {};
    throw new APIError(response.status, error.code ?? 'http_' + response.status, error.message ?? response.statusText);
  }
  return { data, etag: response.headers.get('ETag') };
}

export const api = {
  get: async (path) => (await request('GET', path)).data,
  getWithETag: (path) => request('GET', path),
  post: async (path, body) => (await request('POST', path, body)).data,
  delete: async (path) => (await request('DELETE', path)).data,
  patch: (path, body, etag) => request('PATCH', path, body, etag ? { 'If-Match': etag } : {}),
  put: (path, body, etag) => request('PUT', path, body, etag ? { 'If-Match': etag } : {}),
  postWithETag: (path, body, etag) => request('POST', path, body, etag ? { 'If-Match': etag } : {}),
  async session() {
    const data = (await request('GET', '/v1/auth/session')).data;
    csrfToken = data.csrf_token;
    return data;
  },
  async login(token) {
    const data = (await request('POST', '/v1/auth/login', { token })).data;
    csrfToken = data.csrf_token;
    return data;
  },
  logout: () => request('POST', '/v1/auth/logout'),
};

export const q = encodeURIComponent;
