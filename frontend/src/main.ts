/** Page entry: theme, view registry, API client, then the app shell. */
import './app.css';
import { ProfileApi, apiBaseFromPath } from './api';
import './components/app-shell';
import { registerBuiltinViews } from './views/registry';

registerBuiltinViews();
const app = document.createElement('pf-app');
app.api = new ProfileApi(apiBaseFromPath(window.location.pathname));
document.body.prepend(app);
