import LZ from 'lz-string'
import { decompressLz64 } from '/work/main/src/domain/events/decompress-lz64.ts'
const samples = ['', 'a', 'hello world', JSON.stringify({event:'$pageview', properties:{a:'ü€😀', b:[1,2,3]}}), 'x'.repeat(100000), Array.from({length:5000},(_, i)=>String.fromCharCode(i*7 % 65536)).join('')]
for (const s of samples) { const c = LZ.compressToBase64(s); const d = decompressLz64(c, 1e9); if (d !== s && !(s===''&&d===null)) console.log('MISMATCH', s.slice(0,20), d?.slice(0,20)) }
console.log(decompressLz64('garbage!!', 1e9), LZ.decompressFromBase64('garbage!!'))
try { decompressLz64(LZ.compressToBase64('x'.repeat(100000)), 1000) } catch (e) { console.log('bomb', (e as Error).message) }
console.log('ok')
