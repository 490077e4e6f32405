// The cache key of the public catalog reads (viewer request, cloudfront-js-2.0): each
// route keeps only the query parameters the OpenAPI document gives it, the first value of
// each, in alphabetical order; a path that is no public read keeps none; and Origin only
// when it is one the API answers CORS for, else no Origin at all. Spellings that mean the
// same request (another order, an unknown parameter, a repeated one, an origin that gets
// no CORS answer) are one cache entry, so a client cannot empty the cache by varying what
// the origin ignores. infra/tests/samtemplate's tests hold the routes to the OpenAPI document,
// the origins to API Gateway's CORS configuration, and template.yaml's
// CatalogCacheKeyFunction to this file.
// BEGIN GENERATED catalog routes (make generate, from the route tables' Cache and the OpenAPI document; DO NOT EDIT)
var ROUTES = [
  {path: '/publishers', params: ['client', 'lang', 'limit', 'offset', 'order', 'search']},
  {path: '/publisher/slug/{slug}', params: []},
  {path: '/publisher/random', params: ['client']},
  {path: '/publisher/publications/{id}', params: ['client', 'limit', 'offset', 'order', 'search', 'user_lang']},
  {path: '/tags', params: ['client']},
  {path: '/tags/id/{id}', params: []}
];
// END GENERATED catalog routes

// The CORS origins: template.yaml's FrontendUrl and ExtraCorsOrigins (comma-separated),
// which CloudFormation writes in here (Fn::Sub) from the parameters it gives API Gateway's
// CORS configuration. Browsers send Origin serialized, so the match is exact.
var ORIGINS = '${FrontendUrl},${ExtraCorsOrigins}'.split(',').filter(function (o) {
  return o !== '';
});

function routeParams(uri) {
  var segments = uri.split('/');
  for (var i = 0; i < ROUTES.length; i++) {
    var want = ROUTES[i].path.split('/');
    if (want.length !== segments.length) {
      continue;
    }
    var match = true;
    for (var j = 0; j < want.length && match; j++) {
      if (want[j].charAt(0) === '{') {
        match = segments[j] !== '';
      } else {
        match = want[j] === segments[j];
      }
    }
    if (match) {
      return ROUTES[i].params;
    }
  }
  return [];
}

// corsOrigin keeps a request's Origin when it is a single CORS origin, and drops it
// otherwise: the origin's answer for any other Origin is its answer without one.
function corsOrigin(headers) {
  var origin = headers.origin;
  if (origin === undefined) {
    return;
  }
  if ((origin.multiValue && origin.multiValue.length > 1) || ORIGINS.indexOf(origin.value) < 0) {
    delete headers.origin;
    return;
  }
  headers.origin = {value: origin.value};
}

function handler(event) {
  var request = event.request;
  var given = request.querystring || {};
  corsOrigin(request.headers);
  var params = routeParams(request.uri);
  var kept = {};
  for (var i = 0; i < params.length; i++) {
    var p = given[params[i]];
    if (p !== undefined) {
      kept[params[i]] = {value: p.multiValue && p.multiValue.length > 0 ? p.multiValue[0].value : p.value};
    }
  }
  request.querystring = kept;
  return request;
}
