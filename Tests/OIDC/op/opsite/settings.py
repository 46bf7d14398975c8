"""Settings of the test's OpenID provider. OP_PORT, OP_DB (SQLite file) and OP_MODE_FILE come
from Tests/OIDC/run.sh; the mode file makes the provider misbehave on purpose (opsite/hooks.py)."""
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "test-only-op-key-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oidc_provider",
    "opsite",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "opsite.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [BASE_DIR / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request", "django.contrib.auth.context_processors.auth",
                                       "django.contrib.messages.context_processors.messages"]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ.get("OP_DB", str(BASE_DIR / "op.sqlite3"))}}
USE_TZ = True
LOGIN_URL = "/accounts/login/"
SITE_URL = f"http://127.0.0.1:{os.environ.get('OP_PORT', '8000')}"
OIDC_IDTOKEN_INCLUDE_CLAIMS = True
OIDC_EXTRA_SCOPE_CLAIMS = "opsite.hooks.GroupsClaims"
OIDC_IDTOKEN_PROCESSING_HOOK = "opsite.hooks.misbehave"
OIDC_SKIP_CONSENT_EXPIRE = 0
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
MODE_FILE = os.environ.get("OP_MODE_FILE", "")
