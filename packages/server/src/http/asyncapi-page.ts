/**
 * A readable HTML page of the AsyncAPI document (`/docs/asyncapi`), rendered on the server from
 * the document itself (@parley/protocol `buildAsyncApi`): connection and authentication, close
 * codes, then every client frame and service event with its description, its answers and a table
 * of its `data` fields (name, type, required, description), nested objects and arrays flattened to
 * dotted names. No script; the only style is one inline `<style>` (the docs' Content-Security-Policy
 * allows inline styles, http/security-headers.ts `docsCsp`). Descriptions are a small Markdown
 * subset: paragraphs, `- ` lists, `code`, **bold**, [links](…) and tables.
 */

type Json = Record<string, unknown>;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Inline Markdown of one escaped line: `code`, **bold**, [text](href) with a relative or http(s) href. */
function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(((?:\/|https?:\/\/)[^)\s]*)\)/g, '<a href="$2">$1</a>');
}

/** The Markdown subset of the document's descriptions, as HTML blocks. */
export function markdown(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => l.startsWith('- '))) return `<ul>${lines.map((l) => `<li>${inline(l.slice(2))}</li>`).join('')}</ul>`;
      if (lines.length >= 2 && lines.every((l) => l.startsWith('|'))) {
        const cells = (l: string) => l.slice(1, l.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim());
        const [head, , ...rows] = lines;
        return `<table><thead><tr>${cells(head!).map((c) => `<th>${inline(c)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${cells(r).map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
      }
      return `<p>${lines.map(inline).join('<br>')}</p>`;
    })
    .join('\n');
}

/** A short type of a JSON Schema: `string (uuid)`, `"a" | "b"`, `array of object`, `integer ≥ 0`, `… | null`. */
export function typeOf(s: Json): string {
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (alternatives) return alternatives.map(typeOf).join(' | ');
  if (Array.isArray(s.allOf)) return 'object';
  const type = Array.isArray(s.type) ? s.type.join(' | ') : typeof s.type === 'string' ? s.type : 'any';
  if (type === 'array') return `array of ${typeOf((s.items ?? {}) as Json)}`;
  const bounds = [s.format && `(${String(s.format)})`, s.minimum !== undefined && `≥ ${String(s.minimum)}`, s.maximum !== undefined && `≤ ${String(s.maximum)}`].filter(Boolean);
  return [type, ...bounds].join(' ');
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The properties of an object schema (of its `allOf` parts too), with those of nested objects and arrays of objects under dotted names. */
export function fieldsOf(schema: Json, prefix = '', depth = 0): FieldRow[] {
  const parts = Array.isArray(schema.allOf) ? (schema.allOf as Json[]) : [schema];
  const rows: FieldRow[] = [];
  for (const part of parts) {
    const props = (part.properties ?? {}) as Record<string, Json>;
    const required = new Set((part.required ?? []) as string[]);
    for (const [name, p] of Object.entries(props)) {
      const full = `${prefix}${name}`;
      rows.push({ name: full, type: typeOf(p), required: required.has(name), description: typeof p.description === 'string' ? p.description : '' });
      const nested = p.type === 'array' ? ((p.items ?? {}) as Json) : p;
      if (depth < 3 && (nested.properties || Array.isArray(nested.allOf))) rows.push(...fieldsOf(nested, `${full}${p.type === 'array' ? '[]' : ''}.`, depth + 1));
    }
  }
  return rows;
}

function fieldsTable(data: Json): string {
  const rows = fieldsOf(data);
  if (rows.length === 0) return '<p class="muted">No fields: <code>data</code> is <code>{}</code>.</p>';
  const body = rows.map((r) => `<tr><td><code>${escapeHtml(r.name)}</code></td><td>${escapeHtml(r.type)}</td><td>${r.required ? 'yes' : ''}</td><td>${escapeHtml(r.description)}</td></tr>`).join('');
  return `<table><thead><tr><th>field of <code>data</code></th><th>type</th><th>required</th><th>description</th></tr></thead><tbody>${body}</tbody></table>`;
}

/** The message key a `$ref` (`#/channels/socket/messages/<key>`) names. */
const keyOfRef = (r: unknown) => String((r as { $ref?: string }).$ref ?? '').split('/').pop()!;

function messageSection(key: string, m: Json, operation: Json | undefined): string {
  const payload = (m.payload ?? {}) as Json;
  const data = (((payload.properties ?? {}) as Json).data ?? {}) as Json;
  const reply = operation?.reply as Json | undefined;
  const answers = reply ? ((reply.messages ?? []) as unknown[]).map(keyOfRef) : [];
  const answered = answers.length > 0 ? `<p>Answered by ${answers.map((a) => `<a href="#${escapeHtml(a)}"><code>${escapeHtml(a.split('.').slice(1).join('.'))}</code></a>`).join(', ')}.</p>` : '';
  return `<section id="${escapeHtml(key)}"><h3><code>${escapeHtml(String(m.name))}</code> <small>${escapeHtml(String(m.summary ?? ''))}</small></h3>${markdown(String(m.description ?? ''))}${answered}${fieldsTable(data)}</section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#1b1f23}
code{font:13px ui-monospace,monospace;background:#f2f4f7;padding:0 .2em;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d8dde3;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}section{border-top:1px solid #e3e7eb;padding-top:.5rem}h3 small{font-weight:normal;color:#57606a}.muted{color:#57606a}nav a{margin-right:1rem}`;

/** The page of an AsyncAPI 3.0 document as `buildAsyncApi` makes it (one channel). */
export function renderAsyncApiPage(doc: Json): string {
  const info = doc.info as Json;
  const server = Object.values(doc.servers as Record<string, Json>)[0]!;
  const channel = Object.values(doc.channels as Record<string, Json>)[0]!;
  const messages = ((doc.components as Json).messages ?? {}) as Record<string, Json>;
  const operations = Object.values(doc.operations as Record<string, Json>);
  const operationOf = (key: string) => operations.find((o) => ((o.messages ?? []) as unknown[]).some((r) => keyOfRef(r) === key));
  const sections = (from: string) =>
    Object.entries(messages)
      .filter(([k]) => k.startsWith(`${from}.`))
      .map(([k, m]) => messageSection(k, m, operationOf(k)))
      .join('\n');
  const title = `${String(info.title)} ${String(info.version)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<nav><a href="/api/v1/asyncapi.json">AsyncAPI ${escapeHtml(String(doc.asyncapi))} document (JSON)</a><a href="/docs">REST API (OpenAPI)</a><a href="#client">Client frames</a><a href="#service">Service events</a></nav>
${markdown(String(info.description ?? ''))}
<h2>The socket</h2>
<p><code>${escapeHtml(`${String(server.protocol)}://${String(server.host)}${String(channel.address)}`)}</code></p>
${markdown(String(channel.description ?? ''))}
<h2 id="client">Client frames (client → service)</h2>
${sections('client')}
<h2 id="service">Service events (service → client)</h2>
${sections('service')}
</body></html>`;
}
