/*-------------------------------------------------------------------------
 *
 * avro_schema.c
 *	  Validate the writer schema in an Avro file's header before libavro-c
 *	  ever sees it, and compute the smallest encoding of one record.
 *
 * libavro-c trusts its schema: a self-recursive named type
 * ({"type":"record","name":"r","fields":[{"name":"a","type":"r"}]}) makes
 * avro_generic_value_new() recurse until the stack overflows, and a
 * recursive union lets data nest as deep as it likes.  Iceberg manifests
 * and manifest lists never need either, so a schema is accepted only if:
 *   - it is valid UTF-8 JSON whose top level is a record;
 *   - no named type refers to itself, directly or through its fields
 *     (a reference to a type still being defined is refused), and every
 *     reference names a type defined before it;
 *   - it nests at most SKADE_AVRO_MAX_DEPTH deep (a reference to a named
 *     type counts as the levels that type has), and has at most
 *     SKADE_AVRO_MAX_NODES types in all; a fixed is at most
 *     SKADE_AVRO_MAX_FIXED bytes; a union has 1 to SKADE_AVRO_MAX_BRANCHES
 *     branches, none of them a union;
 *   - names and enum symbols are Avro names ([A-Za-z_][A-Za-z0-9_]*, with
 *     dots between components for full names), so that they are safe as
 *     JSON keys;
 *   - every record, and every array element, takes at least one byte to
 *     encode (a map entry does: its key);
 * The smallest encoding of one record (null 0, boolean/int/long/enum/
 * array/map/string/bytes 1, float 4, double 8, fixed its size, a union its
 * branch index plus its smallest branch) lets the container reader refuse a
 * block that claims more records than its bytes can hold.
 *
 * The compiled schema has one node per type (a named type referred to again
 * is the same node: the nodes form a DAG whose height is at most the depth
 * limit, so a decoder recursing over it is bounded), children by index and
 * record fields by name.
 *
 * The schema is parsed with PostgreSQL's own JSON parser (no exception
 * escapes it that we do not raise ourselves) and walked as jsonb; every
 * failure is 22SK1 naming the file.  The walk allocates in a temporary
 * context ("skade avro schema walk").  Compiled schemas are kept per backend
 * in "skade avro schemas" (under TopMemoryContext), keyed by their exact
 * text (the same text always validates and compiles the same way), at most
 * SCHEMA_CACHE_BYTES of them; past that they are compiled into the
 * caller's context.  A cached schema is never freed, so pointers to it stay
 * valid for the life of the backend.
 *
 * IDENTIFICATION
 *	  src/format/avro_schema.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "format/avro_schema.h"
#include "util/skade_limits.h"

#define SKADE_AVRO_MAX_DEPTH	32
#define SKADE_AVRO_MAX_NODES	10000
#define SKADE_AVRO_MAX_FIXED	(1024 * 1024)
#define SKADE_AVRO_MAX_BRANCHES 64
/* sizes saturate here: far beyond any block we accept */
#define SKADE_AVRO_SIZE_CAP		((int64) 1 << 40)

/* compiled schemas kept by this backend take at most this much memory */
#define SCHEMA_CACHE_BYTES		(4 * 1024 * 1024)

/* a named type defined so far, the bytes it takes at least, and its node */
typedef struct NamedType
{
	const char *name;			/* full or simple name */
	int64		size;
	int32		node;
} NamedType;

/* walk state */
typedef struct SchemaWalk
{
	const char *location;
	int			nodes;
	List	   *open;			/* simple names of the named types being defined */
	List	   *defined;		/* NamedType: full and simple names of those defined */
	/* the compiled schema so far */
	SkadeAvroNode *node;
	int32		nnode;
	int32		maxnode;
	int32	   *child;
	const char **field;
	int32		nchild;
	int32		maxchild;
} SchemaWalk;

/* a cached compiled schema and the text it was compiled from */
typedef struct CachedSchema
{
	char	   *text;
	size_t		len;
	SkadeAvroSchema *schema;
} CachedSchema;

static MemoryContext schema_cxt = NULL;
static List *schema_cache = NIL;
static Size schema_cache_bytes = 0;

static SkadeAvroSchema *compile(const char *json, size_t len, const char *location,
								MemoryContext into);
static SkadeAvroSchema *copy_compiled(SchemaWalk *w, int64 size, int32 root);
static int64 walk_type(SchemaWalk *w, JsonbValue *type, int depth, const char *ns, int32 *node);
static int64 walk_object(SchemaWalk *w, JsonbContainer *obj, int depth, const char *ns,
						 int32 *node);
static int64 walk_union(SchemaWalk *w, JsonbContainer *arr, int depth, const char *ns,
						int32 *node);
static int64 walk_record(SchemaWalk *w, JsonbContainer *obj, const char *name, int depth,
						 const char *ns, int32 *node);
static int64 primitive_size(const char *name, SkadeAvroType *type);
static int64 named_reference(SchemaWalk *w, const char *ref, int depth, int32 *node);
static int32 new_node(SchemaWalk *w, SkadeAvroType type, int32 size);
static void set_children(SchemaWalk *w, int32 node, int n, const int32 *kids,
						 const char *const *names);
static const char *define_name(SchemaWalk *w, JsonbContainer *obj, const char *ns);
static bool get_key(JsonbContainer *obj, const char *key, JsonbValue *out);
static char *string_key(SchemaWalk *w, JsonbContainer *obj, const char *key, bool required);
static bool valid_name(const char *s, bool dotted);
static char *simple_name(const char *full);
static void define(SchemaWalk *w, const char *full, int64 size, int32 node);
static int64 size_sum(int64 a, int64 b);
pg_noreturn static void schema_error(SchemaWalk *w, const char *problem);

/*
 * SkadeAvroSchemaGet
 *		Validate the writer schema (json, len bytes, from the header of the
 *		file at location) and return it compiled: from this backend's cache
 *		when the same text was compiled before.
 */
const SkadeAvroSchema *
SkadeAvroSchemaGet(const char *json, size_t len, const char *location)
{
	ListCell   *lc;
	CachedSchema *c;
	SkadeAvroSchema *s;
	MemoryContext old;

	foreach(lc, schema_cache)
	{
		c = lfirst(lc);
		if (c->len == len && memcmp(c->text, json, len) == 0)
			return c->schema;
	}
	if (schema_cache_bytes + len > SCHEMA_CACHE_BYTES)
		return compile(json, len, location, CurrentMemoryContext);
	if (schema_cxt == NULL)
		schema_cxt = AllocSetContextCreate(TopMemoryContext, "skade avro schemas",
										   ALLOCSET_SMALL_SIZES);
	s = compile(json, len, location, schema_cxt);
	old = MemoryContextSwitchTo(schema_cxt);
	c = palloc(sizeof(CachedSchema));
	c->text = palloc(len + 1);
	memcpy(c->text, json, len);
	c->len = len;
	c->schema = s;
	schema_cache = lappend(schema_cache, c);
	MemoryContextSwitchTo(old);
	schema_cache_bytes = MemoryContextMemAllocated(schema_cxt, true);
	return s;
}

/*
 * SkadeAvroFieldIndex
 *		The index of the field called name of the record node (its child
 *		number), or -1 if it has none (the first of that name).
 */
int
SkadeAvroFieldIndex(const SkadeAvroSchema *s, int32 record, const char *name)
{
	const SkadeAvroNode *n = &s->nodes[record];
	int			i;

	if (n->type != SKADE_AVRO_RECORD)
		return -1;
	for (i = 0; i < n->nchild; i++)
		if (strcmp(s->field[n->child + i], name) == 0)
			return i;
	return -1;
}

/* validate and compile; the result (one allocation's worth) goes into "into" */
static SkadeAvroSchema *
compile(const char *json, size_t len, const char *location, MemoryContext into)
{
	MemoryContext walk_cxt = AllocSetContextCreate(CurrentMemoryContext,
												   "skade avro schema walk",
												   ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(walk_cxt);
	SchemaWalk	w = {location, 0, NIL, NIL};
	char	   *text;
	JsonLexContext *lex;
	JsonParseErrorType rc;
	Jsonb	   *jb;
	JsonbValue	root;
	int64		size;
	int32		top;
	SkadeAvroSchema *s;

	if (len > (size_t) PG_INT32_MAX || !pg_verifymbstr(json, (int) len, true))
		schema_error(&w, "it is not valid UTF-8 text");
	text = pnstrdup(json, len);
	lex = makeJsonLexContextCstringLen(NULL, text, len, PG_UTF8, true);
	rc = pg_parse_json(lex, &nullSemAction);
	if (rc != JSON_SUCCESS)
		schema_error(&w, psprintf("it is not valid JSON: %s", json_errdetail(rc, lex)));
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
	if (JB_ROOT_IS_SCALAR(jb))
		schema_error(&w, "its top level is not a record");
	root.type = jbvBinary;
	root.val.binary.data = &jb->root;
	root.val.binary.len = VARSIZE(jb) - VARHDRSZ;
	if (!JsonContainerIsObject(&jb->root))
		schema_error(&w, "its top level is not a record");
	{
		JsonbValue	t;

		if (!get_key(&jb->root, "type", &t) || t.type != jbvString ||
			(strncmp(t.val.string.val, "record", t.val.string.len) != 0 &&
			 strncmp(t.val.string.val, "error", t.val.string.len) != 0))
			schema_error(&w, "its top level is not a record");
	}
	size = walk_type(&w, &root, 0, "", &top);
	if (size < 1)
		schema_error(&w, "its records take no bytes to encode");
	MemoryContextSwitchTo(into);
	s = copy_compiled(&w, size, top);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(walk_cxt);
	return s;
}

/* the walk's nodes and children as a SkadeAvroSchema, in the current context */
static SkadeAvroSchema *
copy_compiled(SchemaWalk *w, int64 size, int32 root)
{
	SkadeAvroSchema *s = palloc(sizeof(SkadeAvroSchema));
	int			i;

	s->min_record_size = size;
	s->root = root;
	s->nnodes = w->nnode;
	s->nodes = palloc(sizeof(SkadeAvroNode) * Max(w->nnode, 1));
	memcpy(s->nodes, w->node, sizeof(SkadeAvroNode) * w->nnode);
	s->nchild = w->nchild;
	s->child = palloc(sizeof(int32) * Max(w->nchild, 1));
	memcpy(s->child, w->child, sizeof(int32) * w->nchild);
	s->field = palloc0(sizeof(char *) * Max(w->nchild, 1));
	for (i = 0; i < w->nchild; i++)
		if (w->field[i])
			s->field[i] = pstrdup(w->field[i]);
	return s;
}

/*
 * One type: a name (primitive or reference), a union (array) or an object.
 * Returns the bytes it takes at least; *node is its compiled node.
 */
static int64
walk_type(SchemaWalk *w, JsonbValue *type, int depth, const char *ns, int32 *node)
{
	check_stack_depth();
	if (depth > SKADE_AVRO_MAX_DEPTH)
		schema_error(w, psprintf("it nests deeper than %d levels", SKADE_AVRO_MAX_DEPTH));
	if (++w->nodes > SKADE_AVRO_MAX_NODES)
		schema_error(w, psprintf("it has more than %d types", SKADE_AVRO_MAX_NODES));
	if (type->type == jbvString)
	{
		char	   *name = pnstrdup(type->val.string.val, type->val.string.len);
		SkadeAvroType t;
		int64		size = primitive_size(name, &t);

		if (size < 0)
			return named_reference(w, name, depth, node);
		*node = new_node(w, t, 0);
		return size;
	}
	if (type->type != jbvBinary)
		schema_error(w, "a type is neither a name, a union nor an object");
	if (JsonContainerIsArray(type->val.binary.data))
		return walk_union(w, type->val.binary.data, depth, ns, node);
	return walk_object(w, type->val.binary.data, depth, ns, node);
}

/* {"type": ...}: a record, enum, fixed, array, map, or an annotated type. */
static int64
walk_object(SchemaWalk *w, JsonbContainer *obj, int depth, const char *ns, int32 *node)
{
	JsonbValue	t;
	char	   *kind;
	SkadeAvroType prim;

	if (!get_key(obj, "type", &t))
		schema_error(w, "a type object has no \"type\"");
	if (t.type != jbvString)
		return walk_type(w, &t, depth + 1, ns, node);	/* {"type": {...}} or {"type": [...]} */
	kind = pnstrdup(t.val.string.val, t.val.string.len);
	if (strcmp(kind, "record") == 0 || strcmp(kind, "error") == 0)
	{
		const char *name = define_name(w, obj, ns);
		const char *full = name;
		char	   *inner_ns = strrchr(full, '.') ? pnstrdup(full, strrchr(full, '.') - full)
			: (char *) ns;
		int64		size;

		w->open = lappend(w->open, simple_name(full));
		size = walk_record(w, obj, full, depth, inner_ns, node);
		w->open = list_delete_last(w->open);
		define(w, full, size, *node);
		return size;
	}
	if (strcmp(kind, "enum") == 0 || strcmp(kind, "fixed") == 0)
	{
		const char *full = define_name(w, obj, ns);
		int64		size = 1;
		JsonbValue	v;

		if (strcmp(kind, "fixed") == 0)
		{
			if (!get_key(obj, "size", &v) || v.type != jbvNumeric)
				schema_error(w, "a fixed has no numeric \"size\"");
			{
				bool		overflow = false;

				size = numeric_int4_opt_error(v.val.numeric, &overflow);
				if (overflow)
					size = -1;
			}
			if (size < 0 || size > SKADE_AVRO_MAX_FIXED)
				schema_error(w, psprintf("a fixed has a size outside 0..%d", SKADE_AVRO_MAX_FIXED));
			*node = new_node(w, SKADE_AVRO_FIXED, (int32) size);
		}
		else
		{
			JsonbIterator *it;
			JsonbIteratorToken tok;

			if (!get_key(obj, "symbols", &v) || v.type != jbvBinary ||
				!JsonContainerIsArray(v.val.binary.data))
				schema_error(w, "an enum has no \"symbols\" array");
			it = JsonbIteratorInit(v.val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
				if (tok == WJB_ELEM &&
					(v.type != jbvString ||
					 !valid_name(pnstrdup(v.val.string.val, v.val.string.len), false)))
					schema_error(w, "an enum symbol is not an Avro name");
			*node = new_node(w, SKADE_AVRO_ENUM, 0);
		}
		define(w, full, size, *node);
		return size;
	}
	if (strcmp(kind, "array") == 0 || strcmp(kind, "map") == 0)
	{
		bool		array = strcmp(kind, "array") == 0;
		JsonbValue	items;
		int32		item;

		if (!get_key(obj, array ? "items" : "values", &items))
			schema_error(w, array ? "an array has no \"items\"" : "a map has no \"values\"");
		/* elements that take no bytes could be claimed by the billion */
		if (walk_type(w, &items, depth + 1, ns, &item) < 1 && array)
			schema_error(w, "an array's items take no bytes to encode");
		*node = new_node(w, array ? SKADE_AVRO_ARRAY : SKADE_AVRO_MAP, 0);
		set_children(w, *node, 1, &item, NULL);
		return 1;				/* an empty one: a zero block count */
	}
	if (primitive_size(kind, &prim) >= 0)
	{
		*node = new_node(w, prim, 0);	/* e.g. {"type": "int", "logicalType": "date"} */
		return primitive_size(kind, &prim);
	}
	return named_reference(w, kind, depth, node);
}

/* A record's fields, in order; its size is their sum. */
static int64
walk_record(SchemaWalk *w, JsonbContainer *obj, const char *name, int depth, const char *ns,
			int32 *node)
{
	JsonbValue	fields;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	int64		size = 0;
	int			n = 0;
	int32	   *kids;
	const char **names;

	if (!get_key(obj, "fields", &fields) || fields.type != jbvBinary ||
		!JsonContainerIsArray(fields.val.binary.data))
		schema_error(w, psprintf("record \"%s\" has no \"fields\" array", name));
	kids = palloc(sizeof(int32) * (JsonContainerSize(fields.val.binary.data) + 1));
	names = palloc(sizeof(char *) * (JsonContainerSize(fields.val.binary.data) + 1));
	it = JsonbIteratorInit(fields.val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbValue	ftype;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			schema_error(w, psprintf("a field of record \"%s\" is not an object", name));
		names[n] = string_key(w, v.val.binary.data, "name", true);
		if (!get_key(v.val.binary.data, "type", &ftype))
			schema_error(w, psprintf("a field of record \"%s\" has no type", name));
		size = size_sum(size, walk_type(w, &ftype, depth + 1, ns, &kids[n]));
		n++;
	}
	*node = new_node(w, SKADE_AVRO_RECORD, 0);
	set_children(w, *node, n, kids, names);
	return size;
}

/* A union: 1 + its smallest branch; no branch may be a union. */
static int64
walk_union(SchemaWalk *w, JsonbContainer *arr, int depth, const char *ns, int32 *node)
{
	int			n = JsonContainerSize(arr);
	int64		smallest = SKADE_AVRO_SIZE_CAP;
	int32	   *kids;
	int			i;

	if (n < 1 || n > SKADE_AVRO_MAX_BRANCHES)
		schema_error(w, psprintf("a union has %d branches (1..%d allowed)", n,
								 SKADE_AVRO_MAX_BRANCHES));
	kids = palloc(sizeof(int32) * n);
	for (i = 0; i < n; i++)
	{
		JsonbValue *b = getIthJsonbValueFromContainer(arr, i);

		if (b->type == jbvBinary && JsonContainerIsArray(b->val.binary.data))
			schema_error(w, "a union holds a union");
		smallest = Min(smallest, walk_type(w, b, depth + 1, ns, &kids[i]));
	}
	*node = new_node(w, SKADE_AVRO_UNION, 0);
	set_children(w, *node, n, kids, NULL);
	return size_sum(1, smallest);
}

/* the encoded size of a primitive type (and its type), or -1 if name is not one */
static int64
primitive_size(const char *name, SkadeAvroType *type)
{
	static const struct
	{
		const char *name;
		int			size;
		SkadeAvroType type;
	}			prims[] = {
		{"null", 0, SKADE_AVRO_NULL}, {"boolean", 1, SKADE_AVRO_BOOLEAN},
		{"int", 1, SKADE_AVRO_INT}, {"long", 1, SKADE_AVRO_LONG},
		{"float", 4, SKADE_AVRO_FLOAT}, {"double", 8, SKADE_AVRO_DOUBLE},
		{"bytes", 1, SKADE_AVRO_BYTES}, {"string", 1, SKADE_AVRO_STRING}
	};
	int			i;

	for (i = 0; i < lengthof(prims); i++)
		if (strcmp(name, prims[i].name) == 0)
		{
			*type = prims[i].type;
			return prims[i].size;
		}
	return -1;
}

/*
 * A reference to a named type: it must have been defined, and must not be
 * one still being defined (that would be recursion).  It takes as many
 * bytes as the type it names, is that type's node, and nests as deep here
 * as that type has levels.
 */
static int64
named_reference(SchemaWalk *w, const char *ref, int depth, int32 *node)
{
	char	   *simple = simple_name(ref);
	ListCell   *lc;

	foreach(lc, w->open)
		if (strcmp((char *) lfirst(lc), simple) == 0)
			schema_error(w, psprintf("type \"%s\" refers to itself", ref));
	foreach(lc, w->defined)
	{
		const NamedType *t = lfirst(lc);

		if (strcmp(t->name, ref) == 0)
		{
			if (depth + w->node[t->node].height > SKADE_AVRO_MAX_DEPTH)
				schema_error(w, psprintf("it nests deeper than %d levels", SKADE_AVRO_MAX_DEPTH));
			*node = t->node;
			return t->size;
		}
	}
	schema_error(w, psprintf("it refers to type \"%s\", which it does not define before", ref));
}

/* a new node without children */
static int32
new_node(SchemaWalk *w, SkadeAvroType type, int32 size)
{
	SkadeAvroNode *n;

	if (w->nnode == w->maxnode)
	{
		w->maxnode = Max(16, w->maxnode * 2);
		w->node = w->node ? repalloc(w->node, sizeof(SkadeAvroNode) * w->maxnode)
			: palloc(sizeof(SkadeAvroNode) * w->maxnode);
	}
	n = &w->node[w->nnode];
	n->type = type;
	n->nchild = 0;
	n->child = 0;
	n->size = size;
	n->height = 0;
	return w->nnode++;
}

/* give node its n children (record fields with their names), one level above them */
static void
set_children(SchemaWalk *w, int32 node, int n, const int32 *kids, const char *const *names)
{
	int			i;

	while (w->nchild + n > w->maxchild)
	{
		w->maxchild = Max(16, w->maxchild * 2);
		w->child = w->child ? repalloc(w->child, sizeof(int32) * w->maxchild)
			: palloc(sizeof(int32) * w->maxchild);
		w->field = w->field ? repalloc(w->field, sizeof(char *) * w->maxchild)
			: palloc(sizeof(char *) * w->maxchild);
	}
	w->node[node].child = w->nchild;
	w->node[node].nchild = n;
	for (i = 0; i < n; i++)
	{
		w->child[w->nchild + i] = kids[i];
		w->field[w->nchild + i] = names ? names[i] : NULL;
		w->node[node].height = Max(w->node[node].height, w->node[kids[i]].height + 1);
	}
	w->nchild += n;
}

/* The full name of a named type being defined (checked to be an Avro name). */
static const char *
define_name(SchemaWalk *w, JsonbContainer *obj, const char *ns)
{
	char	   *name = string_key(w, obj, "name", true);
	char	   *space = string_key(w, obj, "namespace", false);

	if (strchr(name, '.') == NULL)
	{
		if (space && space[0] != '\0')
		{
			if (!valid_name(space, true))
				schema_error(w, psprintf("namespace \"%s\" is not an Avro name", space));
			ns = space;
		}
		if (ns && ns[0] != '\0')
			name = psprintf("%s.%s", ns, name);
	}
	return name;
}

/* obj's member key, if present */
static bool
get_key(JsonbContainer *obj, const char *key, JsonbValue *out)
{
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), out);

	return v != NULL;
}

/* a string member that must be an Avro name (dotted allowed for "name") */
static char *
string_key(SchemaWalk *w, JsonbContainer *obj, const char *key, bool required)
{
	JsonbValue	v;
	char	   *s;

	if (!get_key(obj, key, &v))
	{
		if (required)
			schema_error(w, psprintf("a named type or field has no \"%s\"", key));
		return NULL;
	}
	if (v.type != jbvString)
		schema_error(w, psprintf("\"%s\" is not a string", key));
	s = pnstrdup(v.val.string.val, v.val.string.len);
	if (strcmp(key, "namespace") != 0 && !valid_name(s, true))
		schema_error(w, psprintf("\"%s\" is not an Avro name", s));
	return s;
}

/* [A-Za-z_][A-Za-z0-9_]*, dot-separated components if dotted */
static bool
valid_name(const char *s, bool dotted)
{
	bool		start = true;

	if (*s == '\0' || strlen(s) > 1024)
		return false;
	for (; *s; s++)
	{
		char		c = *s;

		if (c == '.' && dotted && !start)
		{
			start = true;
			continue;
		}
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
			  (!start && c >= '0' && c <= '9')))
			return false;
		start = false;
	}
	return !start;
}

/* remember a defined named type under its full and its simple name */
static void
define(SchemaWalk *w, const char *full, int64 size, int32 node)
{
	NamedType  *f = palloc(sizeof(NamedType));
	NamedType  *sn = palloc(sizeof(NamedType));

	f->name = full;
	f->size = size;
	f->node = node;
	sn->name = simple_name(full);
	sn->size = size;
	sn->node = node;
	w->defined = lappend(lappend(w->defined, f), sn);
}

static char *
simple_name(const char *full)
{
	const char *dot = strrchr(full, '.');

	return pstrdup(dot ? dot + 1 : full);
}

static int64
size_sum(int64 a, int64 b)
{
	return Min(a + b, SKADE_AVRO_SIZE_CAP);
}

static void
schema_error(SchemaWalk *w, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("Avro file \"%s\" has a writer schema skade does not accept", w->location),
			 errdetail("In its header, %s.", problem),
			 errhint("Manifests and manifest lists written by Iceberg have flat, non-recursive schemas.")));
}
