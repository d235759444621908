{#-
    post-hook of every mart: a DuckDB view whose config has
    `meta: {serving: view}` (dbt_project.yml) gets the relation comment
    'serving: view', which the publish reads (operations/serving.py
    SERVING_VIEW): such a view is published as a view, with its own SQL,
    instead of as a table of its rows. The comment travels with the
    warehouse file, so `feedback-analytics build`, a plain `dbt build` whose
    on-run-end hook publishes and `forget`'s republish all see it. Anything
    else renders nothing (on Spark the marts are tables).
-#}
{% macro serving_view_comment() -%}
    {%- set meta = config.get('meta') or {} -%}
    {%- if target.type == 'duckdb' and meta.get('serving') == 'view'
        and config.get('materialized') == 'view' -%}
        comment on view {{ this }} is 'serving: view'
    {%- endif -%}
{%- endmacro %}
