-- Namespaces: create, exists, list, properties, update, drop.
SELECT skade.create_namespace('sales', '{"owner": "ana", "comment": "eu"}');
SELECT skade.create_namespace('sales.eu');
SELECT skade.create_namespace('sales.eu.de');
SELECT skade.create_namespace('sales_1');
SELECT skade.create_namespace('salesX');
SELECT skade.create_namespace('x%y');

-- what JDBC clients see: the "exists" marker on every namespace
SELECT namespace, property_key, property_value FROM iceberg_namespace_properties
WHERE catalog_name = 'skade' ORDER BY 1, 2;

-- duplicates are unique violations
SELECT skade.create_namespace('sales');
-- a namespace implied by a child also exists
SELECT skade.create_namespace('sales.eu');

SELECT n, skade.namespace_exists(n)
FROM unnest(ARRAY['sales', 'sales.eu', 'sales.eu.de', 'sales.e', 'sale', 'sales_',
                  'sales.eu.de.x', 'x%y', 'x_y']) AS n;

-- listing: exactly one level below, no LIKE fuzziness (_ and %)
SELECT * FROM skade.list_namespaces();
SELECT * FROM skade.list_namespaces('sales');
SELECT * FROM skade.list_namespaces('sales.eu');
SELECT * FROM skade.list_namespaces('sales.eu.de');
SELECT * FROM skade.list_namespaces('nope');

-- a namespace implied only by a table (as JDBC clients create them)
INSERT INTO iceberg_tables VALUES ('skade', 'implied.deep', 't', 'file:///t0', NULL, 'TABLE');
SELECT skade.namespace_exists('implied'), skade.namespace_exists('implied.deep');
SELECT * FROM skade.list_namespaces() WHERE list_namespaces LIKE 'impl%';
SELECT * FROM skade.list_namespaces('implied');
DELETE FROM iceberg_tables WHERE table_namespace = 'implied.deep';

-- properties
SELECT skade.namespace_properties('sales');
SELECT skade.namespace_properties('sales.eu');
SELECT skade.namespace_properties('nope');
SELECT * FROM skade.update_namespace_properties('sales',
    '{"owner": "bo", "tier": "gold"}', ARRAY['comment', 'never-there']);
SELECT skade.namespace_properties('sales');
SELECT * FROM skade.update_namespace_properties('sales', '{}', '{}');
SELECT * FROM skade.update_namespace_properties('sales', '{"a": "1"}', ARRAY['a']);
SELECT * FROM skade.update_namespace_properties('sales', '{}', ARRAY['exists']);
SELECT * FROM skade.update_namespace_properties('sales', '{"exists": "no"}', '{}');
SELECT * FROM skade.update_namespace_properties('sales', '{}', ARRAY[NULL]);
SELECT * FROM skade.update_namespace_properties('sales', NULL, '{}');
SELECT * FROM skade.update_namespace_properties('sales', '{"n": true}', '{}');
SELECT * FROM skade.update_namespace_properties('nope', '{"a": "1"}', '{}');
SELECT skade.namespace_properties('sales');

-- unknown catalog vs unknown namespace
SELECT skade.namespace_properties('sales', 'no_such_catalog');
SELECT skade.namespace_exists('sales', 'no_such_catalog');
SELECT * FROM skade.list_namespaces(NULL, 'no_such_catalog');
-- another catalog is another world
SELECT skade.create_namespace('sales', '{}', 'spark');
SELECT * FROM skade.list_namespaces(NULL, 'spark');
SELECT skade.namespace_properties('sales', 'spark');

-- drop: only empty namespaces
SELECT skade.drop_namespace('sales');
SELECT skade.drop_namespace('sales.eu');
SELECT skade.register_table('sales.eu.de', 'orders', 'file:///wh/orders/v1.metadata.json') > 0;
SELECT skade.drop_namespace('sales.eu.de');
SELECT skade.drop_table('sales.eu.de', 'orders');
SELECT skade.drop_namespace('sales.eu.de');
SELECT skade.drop_namespace('sales.eu');
SELECT skade.drop_namespace('sales');
SELECT skade.drop_namespace('sales');
SELECT skade.drop_namespace('sales', 'spark');
SELECT skade.drop_namespace('sales_1');
SELECT skade.drop_namespace('salesX');
SELECT skade.drop_namespace('x%y');
SELECT count(*) AS rows_left FROM iceberg_namespace_properties;

-- location: with skade.warehouse set, a namespace without a location property
-- reports <warehouse>/<levels>, as JdbcCatalog.loadNamespaceMetadata (and
-- Spark's DESCRIBE NAMESPACE) do; its own location property wins
SELECT skade.create_namespace('wh.a.b');
SELECT skade.create_namespace('own', '{"location": "s3://bucket/own"}');
SELECT skade.namespace_properties('wh.a.b');
SET skade.warehouse = 'file:///warehouse/';
SELECT skade.namespace_properties('wh.a.b'), skade.namespace_properties('own');
SET skade.warehouse = 's3://lake';
SELECT skade.namespace_properties('wh.a.b');
RESET skade.warehouse;
SELECT skade.drop_namespace('wh.a.b'), skade.drop_namespace('own');
