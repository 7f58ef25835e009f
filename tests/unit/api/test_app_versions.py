"""The API's version documents and JSON errors."""
import webob

from elastman.api import app


def _get(path, method='GET'):
    req = webob.Request.blank(path, method=method)
    return req.get_response(app.Application(conf=None))


def test_root_lists_versions():
    resp = _get('/')
    assert resp.status_int == 300
    assert resp.json['versions'][0]['id'] == 'v1.0'
    assert resp.json['versions'][0]['links'][0]['href'].endswith('/v1/')


def test_v1_document():
    resp = _get('/v1/')
    assert resp.status_int == 200
    assert resp.json['version']['status'] == 'CURRENT'


def test_errors_are_json():
    resp = _get('/nowhere')
    assert resp.status_int == 404
    assert resp.json['error']['code'] == 404
    assert 'nowhere' in resp.json['error']['message']
    assert _get('/', method='DELETE').json['error']['code'] == 405
