// Answers 404 at the edge, before the cache and the origin (viewer request,
// cloudfront-js-2.0): the distribution's default behaviour (a path that is no route of
// the API) and the internal avatar-change route, which internal services call by
// invoking the cdn function, never through the distribution. The body is the API's own
// Response Model for a 404.
function handler(event) {
  return {
    statusCode: 404,
    statusDescription: 'Not Found',
    headers: {'content-type': {value: 'application/json'}, 'cache-control': {value: 'no-store'}},
    body: {encoding: 'text', data: '{"data":"Not found","code":404}'}
  };
}
