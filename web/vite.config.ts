import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

const root = fileURLToPath(new URL('.', import.meta.url))

/** The web app: built into `dist/web/` and served by Tally at `/` (src/modules/web-app/). */
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1200,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8000', '/_metrics': 'http://127.0.0.1:8000', '/_ready': 'http://127.0.0.1:8000', '/decide': 'http://127.0.0.1:8000' } },
})
