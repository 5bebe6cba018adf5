"""``examples/flink_count.py`` as ``flink run`` runs a job in secure mode: Flink's security
modules installed from the Flink configuration first, and that configuration's ``security.*``
keys in the job's own, then the job.

    python kerberos_job.py <flink_count.py's arguments>

``CliFrontend.main`` calls ``SecurityUtils.install(new SecurityConfiguration(configuration))``
before it runs a program: its ``HadoopModule`` logs the JVM in from
``security.kerberos.login.keytab`` as ``security.kerberos.login.principal``. A PyFlink script
run with plain ``python`` skips that; Flink's ``HadoopFSDelegationTokenProvider`` then finds
a current user that is not Kerberos (``HadoopUtils.isKerberosSecurityEnabled``) and fetches
no token ("No tokens obtained"), and the job's first checkpoint storage call is refused
("Client cannot authenticate via:[TOKEN, KERBEROS]"). And ``flink run`` executes with
config.yaml as its configuration, where a script's local ``MiniCluster`` gets only what the
script sets: without the keys its token manager's ``KerberosLoginProvider`` looks for a ticket
cache instead of the keytab.
"""

import sys
from pathlib import Path

from pyflink.common import Configuration
from pyflink.java_gateway import get_gateway

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def install_security() -> dict[str, str]:
    """CliFrontend's step, with the configuration FLINK_CONF_DIR's config.yaml holds; its
    ``security.*`` keys."""
    jvm = get_gateway().jvm
    conf = jvm.org.apache.flink.configuration.GlobalConfiguration.loadConfiguration()
    security = jvm.org.apache.flink.runtime.security
    security.SecurityUtils.install(security.SecurityConfiguration(conf))
    return {k: v for k, v in Configuration(j_configuration=conf).to_dict().items()
            if k.startswith("security.")}


def main() -> None:
    keys = install_security()
    sys.path.insert(0, str(EXAMPLES))
    import flink_count
    plain = flink_count.configuration

    def configuration(args):
        conf = plain(args)
        for key, value in keys.items():
            conf.set_string(key, value)
        return conf
    flink_count.configuration = configuration
    flink_count.main()


if __name__ == "__main__":
    main()
