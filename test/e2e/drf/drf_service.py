"""A real Django REST Framework service implementing the User Group Service interface.

Used by ugs's tests to check ugs against DRF's own answers (TokenAuthentication, field errors,
APPEND_SLASH redirects, HTML error pages). Run:
    python3 drf_service.py --token KEY [--route api/user]
It prints its base URL once it listens on a free port. The API is routed at --route, by default
`api/user/`, where Django's CommonMiddleware answers `/api/user` with a 301 (APPEND_SLASH,
DEBUG=False).

Test plumbing, so that one process serves a whole test file (test/kit/drf.ts): the request header
X-Test-Route routes the API elsewhere for that request, as another deployment would;
X-Test-Space keeps a store of groups of its own; POST /_test/fail-next-rotation makes the next
rotation in that space commit, then crash (Django's HTML 500 page, as any unhandled error).
"""
import argparse
import functools
import itertools
import secrets
import sys
import threading
import types

import django
from django.conf import settings

parser = argparse.ArgumentParser()
parser.add_argument('--token', required=True)
parser.add_argument('--route', default='api/user/')
args = parser.parse_args()
# coreapi (only DRF's old schema views use it) is a fifth of the start: not imported, DRF skips it.
sys.modules['coreapi'] = sys.modules['coreschema'] = None

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=['*'],
    SECRET_KEY='ugs-e2e-not-secret',
    ROOT_URLCONF=__name__,
    APPEND_SLASH=True,
    MIDDLEWARE=[f'{__name__}.test_route', 'django.middleware.common.CommonMiddleware'],
    INSTALLED_APPS=['rest_framework'],
    DATABASES={},
    REST_FRAMEWORK={
        'UNAUTHENTICATED_USER': None,
        'DEFAULT_RENDERER_CLASSES': ['rest_framework.renderers.JSONRenderer'],
        'DEFAULT_PARSER_CLASSES': ['rest_framework.parsers.JSONParser'],
    },
    LOGGING_CONFIG=None,
)
django.setup()

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from rest_framework import exceptions, serializers  # noqa: E402
from rest_framework.authentication import TokenAuthentication  # noqa: E402
from rest_framework.permissions import IsAuthenticated  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework.views import APIView  # noqa: E402


class ApiUser:
    is_authenticated = True
    is_active = True


class FixedTokenAuthentication(TokenAuthentication):
    """DRF's TokenAuthentication (header parsing, messages, WWW-Authenticate), one key, no DB."""

    def authenticate_credentials(self, key):
        if key != args.token:
            raise exceptions.AuthenticationFailed('Invalid token.')
        return (ApiUser(), key)


class GetUserSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    user_group_id = serializers.CharField(max_length=255)
    mapping = serializers.DictField(child=serializers.CharField(), required=False)
    properties = serializers.JSONField(required=False)


class RotateSerializer(serializers.Serializer):
    current_token = serializers.CharField()


LOCK = threading.Lock()
TEAM_IDS = itertools.count(1)
GROUPS = {}  # (space, provided_id) -> group
BY_TOKEN = {}  # (space, token) -> provided_id
FAIL_NEXT_ROTATION = set()  # spaces


def space(request):
    return request.headers.get('X-Test-Space', '')


class UserView(APIView):
    authentication_classes = [FixedTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request):
        data = GetUserSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        key = (space(request), v['user_group_id'])
        with LOCK:
            group = GROUPS.get(key)
            created = group is None
            if created:
                group = {
                    'team_id': next(TEAM_IDS),
                    'token': secrets.token_hex(32),
                    'name': v['name'],
                    'provided_id': v['user_group_id'],
                    'properties': v.get('properties'),
                }
                GROUPS[key] = group
                BY_TOKEN[(key[0], group['token'])] = v['user_group_id']
        answer = dict(group, name=v['name'], properties=v.get('properties'))
        return Response({'success': 1, 'new_user_group': created, 'user_group': answer})

    def post(self, request):
        data = RotateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        where = space(request)
        with LOCK:
            provided_id = BY_TOKEN.pop((where, data.validated_data['current_token']), None)
            if provided_id is None:
                raise exceptions.NotFound()
            group = GROUPS[(where, provided_id)]
            group['token'] = secrets.token_hex(32)
            BY_TOKEN[(where, group['token'])] = provided_id
            answer = {k: group[k] for k in ('team_id', 'token', 'name', 'provided_id')}
            crash = where in FAIL_NEXT_ROTATION
            FAIL_NEXT_ROTATION.discard(where)
        if crash:
            raise RuntimeError('the rotation is committed, then the view crashes')
        answer['api_environment_tag'] = 'Customer'
        return Response({'success': 1, 'user_group': answer})


def fail_next_rotation(request):
    with LOCK:
        FAIL_NEXT_ROTATION.add(space(request))
    return HttpResponse(status=204)


@functools.lru_cache(maxsize=None)
def routed(route):
    """A URLconf with the API at `route` (a module, as Django's request.urlconf expects)."""
    urlconf = types.ModuleType(f'routed {route}')
    urlconf.urlpatterns = [
        path(route, UserView.as_view()),
        path('_test/fail-next-rotation', fail_next_rotation),
    ]
    return urlconf


def test_route(get_response):
    """Middleware before CommonMiddleware, so APPEND_SLASH looks at the route asked for."""

    def middleware(request):
        route = request.headers.get('X-Test-Route')
        if route is not None:
            request.urlconf = routed(route)
        return get_response(request)

    return middleware


urlpatterns = routed(args.route).urlpatterns

if __name__ == '__main__':
    # What `manage.py runserver --noreload` runs, on a port chosen here so it can be printed;
    # without Nagle, or each answer (headers, then body) waits for a delayed ACK (40 ms).
    WSGIRequestHandler.disable_nagle_algorithm = True
    server = ThreadedWSGIServer(('127.0.0.1', 0), WSGIRequestHandler)
    server.set_app(get_wsgi_application())
    print(f'http://127.0.0.1:{server.server_address[1]}', flush=True)
    server.serve_forever()
