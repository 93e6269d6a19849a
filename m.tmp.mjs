import { build } from 'esbuild';
const entry = process.argv[2];
const r = await build({ entryPoints: { index: entry }, bundle: true, minify: true, format: 'esm', platform: 'node', target: 'node22', mainFields: ['module','main'], external: ['@aws-sdk/*'], write: false, metafile: true, outdir: '/tmp/split-out', splitting: true, chunkNames: 'chunk-[hash]' });
const outs = Object.entries(r.metafile.outputs).filter(([k]) => !k.endsWith('.map'));
const e = outs.find(([k, v]) => v.entryPoint === entry);
let stat = new Set([e[0]]); let grew = true;
while (grew) { grew = false; for (const [k, v] of outs) if (stat.has(k)) for (const i of v.imports) if (i.kind === 'import-statement' && !i.external && !stat.has(i.path)) { stat.add(i.path); grew = true; } }
const init = [...stat].reduce((n, k) => n + (r.metafile.outputs[k]?.bytes ?? 0), 0);
console.log(entry, 'entry', e[1].bytes, 'loaded at init:', init, `(${(init/1024).toFixed(1)} KiB)`, 'all:', outs.reduce((n,[,v])=>n+v.bytes,0));
