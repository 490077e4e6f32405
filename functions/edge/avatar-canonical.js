// One URL per picture at the edge (viewer request, cloudfront-js-2.0): API Gateway's
// HTTP API hands the function a decoded path, so /user/avatar/%33 would reach it as
// /user/avatar/3 while CloudFront caches it under the spelling the viewer sent, which no
// invalidation names. Anything but the canonical spelling (decimal id without sign or
// leading zero, then nothing, /high or /scaled) is 404 before the cache.
function handler(event) {
  var request = event.request;
  if (/^\/user\/avatar\/[1-9][0-9]{0,18}(\/(high|scaled))?$/.test(request.uri)) {
    return request;
  }
  return {
    statusCode: 404,
    statusDescription: 'Not Found',
    headers: {'content-type': {value: 'application/json'}, 'cache-control': {value: 'no-store'}},
    body: {encoding: 'text', data: '{"data":"User not found","code":404}'}
  };
}
