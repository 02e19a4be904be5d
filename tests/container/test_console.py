"""The Cypher console guard against Neo4j in a container (``-m container``): the functions of
tests/store/test_security_console.py, imported here with the fixtures of tests/container/conftest.py, so hostile queries
are refused by the API and the CLI, each lock holds on its own, parameters stay data, the server refuses file URLs and
loads no plugin procedure (the container gets the project's hardening through NEO4J_* settings, whichever image),
wrong credentials are refused, and the graph, users and password are untouched afterwards.
"""

from __future__ import annotations

from tests.store.test_security_console import (  # noqa: F401
    test_api_refuses_file_url_and_admin_even_with_write,
    test_api_refuses_in_read_only_mode,
    test_cli_hostile_param_names_do_not_change_the_query,
    test_cli_param_values_are_never_spliced,
    test_cli_passwd_leak_is_closed,
    test_cli_refuses_with_one_line_and_exit_2,
    test_cli_refuses_write_mode_file_reads,
    test_local_server_refuses_file_urls_and_loads_no_plugin_procedure,
    test_local_server_refuses_missing_and_wrong_credentials,
    test_parameter_values_are_data_not_code,
    test_plan_lock_refuses_when_the_static_lock_is_bypassed,
    test_read_only_queries_still_answer,
    test_read_session_lock_is_enforced_by_the_server,
    untouched,
)

