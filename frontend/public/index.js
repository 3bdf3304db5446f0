// Entry module for TensorBoard's IFRAME loading mechanism. TensorBoard imports this file from
// <prefix>/data/plugin/profile/ and calls render(); we navigate the iframe to the app page.
export async function render() {
  document.location.href = 'index.html';
}
