"""The provider's own claims (groups, email_verified) and its misbehaviour on request: the test
writes a mode to OP_MODE_FILE before a sign-in and this real provider then issues, signed with its
real key unless said otherwise, a token with another issuer, for another client, expired, or
signed by a key its JWKS does not publish."""
import time

from django.conf import settings
from oidc_provider.lib.claims import ScopeClaims


def mode():
    if not settings.MODE_FILE:
        return ""
    try:
        with open(settings.MODE_FILE) as file:
            return file.read().strip()
    except FileNotFoundError:
        return ""


class GroupsClaims(ScopeClaims):
    """`groups` (the person's Django groups) and `email_verified`, asked for with `profile`/`email`."""

    def scope_profile(self):
        return {"groups": sorted(group.name for group in self.user.groups.all())}

    def scope_email(self):
        return {"email": self.user.email, "email_verified": True}


def misbehave(id_token, user, token, request, **kwargs):
    current = mode()
    if current == "issuer":
        id_token["iss"] = id_token["iss"].replace("/openid", "/another-issuer")
    elif current == "audience":
        id_token["aud"] = "another-client"
    elif current == "expired":
        now = int(time.time())
        id_token["iat"] = now - 7200
        id_token["exp"] = now - 3600
    return id_token
