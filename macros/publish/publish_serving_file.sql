{#-
    on-run-end: publish the marts a successful run built to the serving file
    the dashboard, `report`, `export` and `mf` read, through the dbt-duckdb
    plugin operations/dbt_plugin.py (profiles.yml), with the same code,
    atomic rename and lock as `feedback-analytics build` and `publish`.

    Publishes when all of these hold (otherwise nothing, and says why when it
    matters):
    - the command is `build`, `run`, `seed` or `snapshot` (a `test`, `compile`,
      `show`, `parse`, `docs generate` or `run-operation` changes no mart);
    - the target is the DuckDB warehouse (not the read-only `serving` target;
      a Spark build is published by `feedback-analytics build --target spark`);
    - no result failed or errored (a failed build publishes nothing);
    - at least one model, seed or snapshot was built (a `dbt build --select
      test_type:unit` builds none), and not with `--empty`.
    After a `--full-refresh` build the publish is a full one (the flag is
    passed on); otherwise it is incremental when it can be.
    The plugin records the build beside the warehouse first: when the publish
    itself fails, the run fails and every reader says that a newer build
    exists and how to publish it (warehouse/build_record.py).
-#}
{% macro publish_serving_file(results) %}
    {%- if not execute or target.type != 'duckdb' or target.name == 'serving' -%}
        {{ return('') }}
    {%- endif -%}
    {%- if flags.WHICH not in ['build', 'run', 'seed', 'snapshot'] -%}
        {{ return('') }}
    {%- endif -%}
    {%- set failed = [] -%}
    {%- set built = [] -%}
    {%- for result in results -%}
        {%- if result.status in ['error', 'fail', 'runtime error'] -%}
            {%- do failed.append(result.node.name) -%}
        {%- elif result.status == 'success'
            and result.node.resource_type in ['model', 'seed', 'snapshot'] -%}
            {%- do built.append(result.node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if failed -%}
        {%- do log(
            "no publish: the run failed (" ~ failed | join(", ")
            ~ "); the serving file keeps the last successful build",
            info=true
        ) -%}
        {{ return('') }}
    {%- endif -%}
    {%- if not built or flags.EMPTY -%}
        {{ return('') }}
    {%- endif -%}
    {%- set line = run_query(
        "select feedback_publish('" ~ invocation_id ~ "', '" ~ as_of_text() ~ "', "
        ~ ('true' if flags.FULL_REFRESH else 'false') ~ ")"
    ).rows[0][0] -%}
    {%- if line.startswith('not published') -%}
        {{ exceptions.raise_compiler_error(line) }}
    {%- endif -%}
    {%- do log(line, info=true) -%}
    {{ return('') }}
{% endmacro %}
