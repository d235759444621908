{#-
    Fails for every row where the SQL boolean `expression` is false. On a
    column, the expression is applied to the column: `column_name
    expression`, e.g. `>= created_at`. A null result passes (SQL's where
    semantics), so write `coalesce(...)` or `is not distinct from` when null
    must fail. Same arguments as dbt_utils.expression_is_true.
-#}
{% test expression_is_true(model, expression, column_name=none) %}

with failing as (
    select *
    from {{ model }}
    {%- if column_name is none %}
        where not ({{ expression }})
    {%- else %}
        where not ({{ column_name }} {{ expression }})
    {%- endif %}
)

select * from failing

{% endtest %}
