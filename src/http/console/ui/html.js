/** htm bound to Preact: the console's templates without a JSX compile step. */
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
