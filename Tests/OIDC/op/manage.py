#!/usr/bin/env python3
"""The test's OpenID provider: django-oidc-provider in a minimal Django project (Tests/OIDC/run.sh)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "opsite.settings")
    from django.core.management import execute_from_command_line
    execute_from_command_line(sys.argv)
