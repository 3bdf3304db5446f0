/** Page entry: theme, view registry, API client (with a live page's token), then the app shell. */
import './app.css';
import { takeAccessToken } from './access-token';
import { ProfileApi, apiBaseFromPath } from './api';
import './components/app-shell';
import { registerBuiltinViews } from './views/registry';

registerBuiltinViews();
const app = document.createElement('pf-app');
const token = takeAccessToken(window.location, window.history, localStorageOrNothing());
app.api = new ProfileApi(apiBaseFromPath(window.location.pathname), undefined, token);
document.body.prepend(app);

function localStorageOrNothing(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined; // storage disabled: the token lasts until a reload
  }
}
