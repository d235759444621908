{#-
    The first `words` words of a text (words: runs of anything but spaces,
    tabs and line breaks), joined by single spaces, cut at `max_characters`
    (a text without spaces, Chinese say, is one word), with an ellipsis (…)
    when the text has more; null for null or blank text. Used to name golden
    sessions by their initial message.

    Whitespace runs become one space first: regexp_replace replaces every
    match on Spark, and only with the 'g' option on DuckDB. The patterns hold
    no backslash escape a SQL literal could change (`\t` reaches either
    regex engine as a tab or as its escape, both a tab).
-#}
{% macro first_words(text, words, max_characters=60) -%}
    {{ return(adapter.dispatch('first_words', 'feedback_analytics')(text, words, max_characters)) }}
{%- endmacro %}

{% macro default__first_words(text, words, max_characters) -%}
    {{ _first_words_of(
        "trim(regexp_replace(" ~ text ~ ", '[ \\t\\n\\r]+', ' '))", words, max_characters
    ) }}
{%- endmacro %}

{% macro duckdb__first_words(text, words, max_characters) -%}
    {{ _first_words_of(
        "trim(regexp_replace(" ~ text ~ ", '[ \\t\\n\\r]+', ' ', 'g'))", words, max_characters
    ) }}
{%- endmacro %}

{% macro _first_words_of(collapsed, words, max_characters) -%}
    {%- set kept = "substring(regexp_extract(" ~ collapsed ~ ", '^([^ ]+( [^ ]+){0," ~ (words - 1)
        ~ "})', 1), 1, " ~ max_characters ~ ")" -%}
    case
        when nullif({{ collapsed }}, '') is not null then
            {{ kept }}
            || case when length({{ collapsed }}) > length({{ kept }}) then '…' else '' end
    end
{%- endmacro %}
