"""People, groups and clients of the test's provider; `rotate` replaces its signing key."""
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import BaseCommand
from oidc_provider.models import Client, ResponseType, RSAKey


class Command(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("--redirect-uri", default="")
        parser.add_argument("--secret", default="")
        parser.add_argument("--rotate", action="store_true")

    def handle(self, *args, redirect_uri, secret, rotate, **options):
        if rotate:
            old = list(RSAKey.objects.all())
            call_command("creatersakey")
            for key in old:
                key.delete()
            print(RSAKey.objects.get().kid)
            return
        call_command("creatersakey")
        code, _ = ResponseType.objects.get_or_create(value="code", defaults={"description": "code"})
        for people, group in [(["alice"], "watchdog-admins"), (["carol"], "mail-team"), (["bob"], None)]:
            for name in people:
                user = User.objects.create_user(name, f"{name}@example.com" if name != "bob" else "bob@elsewhere.org", "pw-" + name)
                if group:
                    user.groups.add(Group.objects.get_or_create(name=group)[0])
        for client_id in ["watchdog", "another-client"]:
            client = Client.objects.create(name=client_id, client_type="confidential", client_id=client_id, client_secret=secret,
                                           jwt_alg="RS256", require_consent=False, reuse_consent=True)
            client.redirect_uris = [redirect_uri]
            client.scope = ["openid", "email", "profile"]
            client.save()
            client.response_types.add(code)
        print(RSAKey.objects.get().kid)
