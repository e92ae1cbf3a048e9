import htm from 'htm';
import { h } from 'preact';

/** JSX-like tagged templates for Preact, with no build step: html`<p>${text}</p>`. */
export const html = htm.bind(h);
