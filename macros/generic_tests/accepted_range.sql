{#-
    Fails for every row whose column lies outside [min_value, max_value].
    Either bound may be left out. `inclusive` sets both ends (default true);
    `min_inclusive` / `max_inclusive` override one end. Nulls pass: pair the
    test with not_null when a value is required. Same arguments as
    dbt_utils.accepted_range, plus the per-end flags.
-#}
{% test accepted_range(
    model,
    column_name,
    min_value=none,
    max_value=none,
    inclusive=true,
    min_inclusive=none,
    max_inclusive=none
) %}

{%- if min_value is none and max_value is none -%}
    {{ exceptions.raise_compiler_error(
        "accepted_range on " ~ model ~ "." ~ column_name ~ ": give min_value, max_value or both"
    ) }}
{%- endif -%}
{%- set min_inclusive = inclusive if min_inclusive is none else min_inclusive -%}
{%- set max_inclusive = inclusive if max_inclusive is none else max_inclusive -%}
{%- set out_of_range_conditions = [] -%}
{%- if min_value is not none -%}
    {%- do out_of_range_conditions.append(
        "tested_value " ~ ("<" if min_inclusive else "<=") ~ " " ~ min_value
    ) -%}
{%- endif -%}
{%- if max_value is not none -%}
    {%- do out_of_range_conditions.append(
        "tested_value " ~ (">" if max_inclusive else ">=") ~ " " ~ max_value
    ) -%}
{%- endif %}

with tested as (
    select {{ column_name }} as tested_value
    from {{ model }}
),

out_of_range as (
    select tested_value
    from tested
    where {{ out_of_range_conditions | join(" or ") }}
)

select * from out_of_range

{% endtest %}
