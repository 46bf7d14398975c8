from django.apps import AppConfig


class OpsiteConfig(AppConfig):
    name = "opsite"

    def ready(self):
        # "rogue-key": the token is signed with a key made for the occasion, under the kid of
        # the provider's published key: a signature the JWKS cannot verify.
        from cryptography.hazmat.primitives.asymmetric import rsa
        import jwt
        from oidc_provider.lib.endpoints import token as endpoint
        from oidc_provider.lib.utils import token as utils
        from opsite.hooks import mode

        original = utils.encode_id_token
        rogue = rsa.generate_private_key(public_exponent=65537, key_size=2048)

        def encode_id_token(payload, client):
            if mode() != "rogue-key":
                return original(payload, client)
            kid = utils.get_client_alg_keys(client)[0]["kid"]
            return jwt.encode(payload, rogue, algorithm="RS256", headers={"kid": kid})

        endpoint.encode_id_token = encode_id_token
