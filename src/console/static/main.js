import { render } from 'preact';
import { App } from './app.js';
import { html } from './lib/html.js';

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
