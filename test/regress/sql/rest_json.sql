-- rest_value_map (C): one statistic of files()' "columns" as the REST protocol's
-- {keys, values} map by ascending field id; NULL when no column has it
SELECT skade.rest_value_map('{"b": {"id": 2, "lower": "x", "size": 5}, "a": {"id": 1, "lower": 0},
                              "c": {"id": 10, "lower": null}, "d": {"id": 3}}', 'lower') AS lower,
       skade.rest_value_map('{"b": {"id": 2, "size": 5}}', 'size') AS size,
       skade.rest_value_map('{"b": {"id": 2, "size": 5}}', 'nan_count') AS absent,
       skade.rest_value_map('{}', 'size') AS empty,
       skade.rest_value_map(NULL, 'size') AS null_columns,
       skade.rest_value_map('{"a": {"id": 1, "size": 1}}', NULL) AS null_stat;
-- values keep their JSON type (bounds decoded by type: numbers, strings, objects)
SELECT skade.rest_value_map('{"x": {"id": 7, "upper": {"k": [1, 2]}}, "y": {"id": "4", "upper": 2.5},
                              "z": {"upper": true}}', 'upper') AS mixed_and_no_id_last;
-- a column that is not an object is no column; an id that is no integer is an error
SELECT skade.rest_value_map('{"a": 1, "b": {"id": 2, "size": 3}}', 'size') AS skips_scalars;
SELECT skade.rest_value_map('{"a": {"id": "one", "size": 1}}', 'size');
SELECT skade.rest_value_map('[1, 2]', 'size');
