/** Page entry: theme, view registry, API client (with a live page's token), then the app shell. */
import './app.css';
import { takeAccessToken } from './access-token';
import { ProfileApi, apiBaseFromPath } from './api';
import { installHostMirror, restoreFromHost } from './host-url';
import './components/app-shell';
import { registerBuiltinViews } from './views/registry';

registerBuiltinViews();
// Inside TensorBoard: the selection comes back from, and goes to, TensorBoard's address.
restoreFromHost(window);
const app = document.createElement('pf-app');
const token = takeAccessToken(window.location, window.history, localStorageOrNothing());
app.api = new ProfileApi(apiBaseFromPath(window.location.pathname), undefined, token);
installHostMirror(window);
document.body.prepend(app);

function localStorageOrNothing(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined; // storage disabled: the token lasts until a reload
  }
}
