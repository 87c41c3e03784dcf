"""A real Django REST Framework service implementing the User Group Service interface.

Used by ugs's end-to-end tests to check ugs against DRF's own answers (TokenAuthentication,
field errors, APPEND_SLASH redirects, HTML error pages). Run:
    python3 drf_service.py --port 8123 --token KEY [--no-slash]
--no-slash routes `api/user` (no trailing slash); by default the route is `api/user/` and
Django's CommonMiddleware answers `/api/user` with a 301 (APPEND_SLASH, DEBUG=False).
"""
import argparse
import secrets
import sys
import threading

import django
from django.conf import settings

parser = argparse.ArgumentParser()
parser.add_argument('--port', type=int, required=True)
parser.add_argument('--token', required=True)
parser.add_argument('--no-slash', action='store_true')
args = parser.parse_args()

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=['*'],
    SECRET_KEY='ugs-e2e-not-secret',
    ROOT_URLCONF=__name__,
    APPEND_SLASH=True,
    MIDDLEWARE=['django.middleware.common.CommonMiddleware'],
    INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth', 'rest_framework'],
    DATABASES={},
    REST_FRAMEWORK={
        'UNAUTHENTICATED_USER': None,
        'DEFAULT_RENDERER_CLASSES': ['rest_framework.renderers.JSONRenderer'],
        'DEFAULT_PARSER_CLASSES': ['rest_framework.parsers.JSONParser'],
    },
    LOGGING_CONFIG=None,
)
django.setup()

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
GROUPS = {}  # provided_id -> group
BY_TOKEN = {}  # token -> provided_id


class UserView(APIView):
    authentication_classes = [FixedTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request):
        data = GetUserSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        with LOCK:
            group = GROUPS.get(v['user_group_id'])
            created = group is None
            if created:
                group = {
                    'team_id': len(GROUPS) + 1,
                    'token': secrets.token_hex(32),
                    'name': v['name'],
                    'provided_id': v['user_group_id'],
                    'properties': v.get('properties'),
                }
                GROUPS[v['user_group_id']] = group
                BY_TOKEN[group['token']] = v['user_group_id']
        answer = dict(group, name=v['name'], properties=v.get('properties'))
        return Response({'success': 1, 'new_user_group': created, 'user_group': answer})

    def post(self, request):
        data = RotateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with LOCK:
            provided_id = BY_TOKEN.pop(data.validated_data['current_token'], None)
            if provided_id is None:
                raise exceptions.NotFound()
            group = GROUPS[provided_id]
            group['token'] = secrets.token_hex(32)
            BY_TOKEN[group['token']] = provided_id
            answer = {k: group[k] for k in ('team_id', 'token', 'name', 'provided_id')}
        answer['api_environment_tag'] = 'Customer'
        return Response({'success': 1, 'user_group': answer})


def boom(request):
    raise RuntimeError('an unhandled error: Django answers with its HTML 500 page')


urlpatterns = [
    path('api/user' if args.no_slash else 'api/user/', UserView.as_view()),
    path('boom/', boom),
]

if __name__ == '__main__':
    from django.core.management import call_command

    sys.argv = ['drf_service']
    call_command('runserver', f'127.0.0.1:{args.port}', use_reloader=False, use_threading=True)
