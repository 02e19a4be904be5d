import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.neo4j.configuration.Config;
import org.neo4j.cypher.internal.CypherVersion;
import org.neo4j.cypher.internal.PreParsedQuery;
import org.neo4j.cypher.internal.PreParser;
import org.neo4j.cypher.internal.ast.AdministrationCommand;
import org.neo4j.cypher.internal.ast.Clause;
import org.neo4j.cypher.internal.ast.Query;
import org.neo4j.cypher.internal.ast.SchemaCommand;
import org.neo4j.cypher.internal.ast.Statement;
import org.neo4j.cypher.internal.ast.Statements;
import org.neo4j.cypher.internal.ast.SubqueryCall;
import org.neo4j.cypher.internal.ast.UnresolvedCall;
import org.neo4j.cypher.internal.ast.Unwind;
import org.neo4j.cypher.internal.config.CypherConfiguration;
import org.neo4j.cypher.internal.expressions.Expression;
import org.neo4j.cypher.internal.expressions.FunctionInvocation;
import org.neo4j.cypher.internal.expressions.IntegerLiteral;
import org.neo4j.cypher.internal.parser.AstParserFactory$;
import org.neo4j.cypher.internal.util.ASTNode;
import org.neo4j.cypher.internal.util.InputPosition;
import org.neo4j.cypher.internal.util.Neo4jCypherExceptionFactory;
import org.neo4j.cypher.internal.util.devNullLogger$;

/**
 * The Cypher console's reading of a query, by Neo4j's own parser: a long-lived worker for graphlink/store/guard.py.
 *
 * <p>The server's parsing phase ({@code org.neo4j.cypher.internal.frontend.phases.Parse} in neo4j-front-end 5.26)
 * runs the pre-parser ({@link PreParser}: {@code CYPHER ...} options, {@code EXPLAIN}/{@code PROFILE}) and then, with
 * {@code internal.cypher.parser.antlr_enabled} at its default {@code true}, {@code AstParserFactory(version)(text,
 * exceptionFactory, Some(logger))}; this class makes exactly those calls (the ANTLR Cypher 5 parser, with its own
 * {@code \\uXXXX} handling) on the configuration defaults, so it reads what the server reads. It then walks the whole
 * syntax tree and answers with facts, never a judgement: every function invocation's full name, every procedure
 * call's name, the kinds of clauses, the statement's kind, the tree's size and depth and the nesting of
 * subqueries. graphlink decides on them.
 *
 * <p>Protocol on stdin/stdout: a request is a line with the byte length of the query, then that many bytes of
 * UTF-8; the answer is one line of JSON (ASCII only). Each query is parsed on a new thread with a bounded stack
 * ({@code -Dgraphlink.parseStack=<bytes>}): a stack overflow answers {@code {"error": "overflow"}}. The caller
 * bounds the time and kills the process if it does not answer. EOF on stdin ends the process.
 */
public final class CypherCheck {
    private CypherCheck() {}

    private static final PreParser PRE_PARSER = new PreParser(CypherConfiguration.fromConfig(Config.defaults()));
    /** the walk stops counting here: a tree this large is refused anyway, and a cycle cannot keep it busy */
    private static final int MAX_NODES = 1_000_000;

    public static void main(String[] args) throws Exception {
        long stack = Long.getLong("graphlink.parseStack", 1L << 20);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        out.println("{\"ready\": true}");
        out.flush();
        while (true) {
            String header = readLine(in);
            if (header == null) {
                return;
            }
            byte[] body = new byte[Integer.parseInt(header.trim())];
            in.readFully(body);
            String query = new String(body, StandardCharsets.UTF_8);
            String[] answer = new String[1];
            Thread worker = new Thread(null, () -> answer[0] = answer(query), "cypher-check", stack);
            worker.start();
            worker.join();
            out.println(answer[0] == null ? "{\"error\": \"crash\", \"message\": \"no answer\"}" : answer[0]);
            out.flush();
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                return null;
            }
            line.write(b);
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    static String answer(String query) {
        try {
            return facts(query);
        } catch (StackOverflowError e) {
            return "{\"error\": \"overflow\"}";
        } catch (OutOfMemoryError e) {
            return "{\"error\": \"memory\"}";
        } catch (RuntimeException e) {
            return "{\"error\": \"syntax\", \"message\": " + json(String.valueOf(e.getMessage())) + "}";
        } catch (Throwable e) {
            return "{\"error\": \"crash\", \"message\": " + json(e.getClass().getName() + ": " + e.getMessage()) + "}";
        }
    }

    /** The facts of one query (see the class comment), as JSON. */
    static String facts(String query) {
        PreParsedQuery pre = PRE_PARSER.preParse(query, devNullLogger$.MODULE$);
        String version = pre.options().queryOptions().cypherVersion().toString();
        InputPosition offset = pre.options().offset();
        Neo4jCypherExceptionFactory errors = new Neo4jCypherExceptionFactory(query, scala.Option.apply(offset));
        StringBuilder sb = new StringBuilder("{\"version\": ").append(json(version));
        sb.append(", \"options\": ").append(json(pre.rawPreparserOptions()));
        // the server parses only its default version's text with Cypher 5's parser; another version is reported
        Statements statements = AstParserFactory$.MODULE$.apply(CypherVersion.Cypher5)
                .apply(pre.statement(), errors, scala.Option.apply(devNullLogger$.MODULE$)).statements();
        int count = statements.statements().size();
        sb.append(", \"statements\": ").append(count);
        if (count != 1) {
            return sb.append('}').toString();
        }
        Statement statement = statements.statements().head();
        String kind = statement instanceof Query ? "query"
                : statement instanceof SchemaCommand ? "schema"
                : statement instanceof AdministrationCommand ? "administration" : "other";
        sb.append(", \"kind\": ").append(json(kind));
        sb.append(", \"statement\": ").append(json(statement.getClass().getSimpleName()));

        List<String[]> clauses = new ArrayList<>();
        Set<String> opaque = new TreeSet<>();
        List<String[]> functions = new ArrayList<>();
        List<String[]> procedures = new ArrayList<>();
        // range() calls: [position, "unwind" or "expression", each argument's integer value or "?"]; a range that
        // is the very expression of an UNWIND makes rows (where the server's limits apply), any other is evaluated
        // inside one row
        List<String[]> ranges = new ArrayList<>();
        Set<Object> unwound = Collections.newSetFromMap(new IdentityHashMap<>());
        boolean inTransactions = false;
        int nodes = 0;
        int depth = 0;
        int subqueries = 0;
        // iterative: a deep tree must not overflow this walk; (object, tree depth, subquery depth)
        ArrayDeque<Object[]> stack = new ArrayDeque<>();
        stack.push(new Object[] {statement, 0, 0});
        while (!stack.isEmpty() && nodes < MAX_NODES) {
            Object[] top = stack.pop();
            Object obj = top[0];
            int d = (Integer) top[1];
            int s = (Integer) top[2];
            if (obj instanceof ASTNode node) {
                nodes++;
                d++;
                depth = Math.max(depth, d);
                String name = node.getClass().getSimpleName();
                if (node instanceof Clause) {
                    clauses.add(new String[] {name, where(node.position(), offset)});
                }
                if (node instanceof SubqueryCall call) {
                    s++;
                    inTransactions |= call.inTransactionsParameters().isDefined();
                } else if (name.equals("ExistsExpression") || name.equals("CountExpression")
                        || name.equals("CollectExpression")) {
                    s++;
                }
                subqueries = Math.max(subqueries, s);
                if (node instanceof Unwind u) {
                    unwound.add(u.expression());
                }
                if (node instanceof FunctionInvocation f) {
                    functions.add(new String[] {f.name(), where(f.position(), offset)});
                    if (f.name().equalsIgnoreCase("range")) {
                        List<String> entry = new ArrayList<>();
                        entry.add(where(f.position(), offset));
                        entry.add(unwound.contains(f) ? "unwind" : "expression");
                        scala.collection.Iterator<Expression> args = f.args().iterator();
                        while (args.hasNext()) {
                            Expression arg = args.next();
                            entry.add(arg instanceof IntegerLiteral lit ? String.valueOf(lit.value()) : "?");
                        }
                        ranges.add(entry.toArray(new String[0]));
                    }
                } else if (node instanceof UnresolvedCall c) {
                    List<String> parts = new ArrayList<>();
                    scala.collection.Iterator<String> it = c.procedureNamespace().parts().iterator();
                    while (it.hasNext()) {
                        parts.add(it.next());
                    }
                    parts.add(c.procedureName().name());
                    procedures.add(new String[] {String.join(".", parts), where(c.position(), offset)});
                }
                if (!(node instanceof scala.Product)) {
                    opaque.add(name);   // children we cannot enumerate: the caller refuses the query
                    continue;
                }
            }
            pushChildren(stack, obj, d, s);
        }
        sb.append(", \"clauses\": ").append(jsonPairs(clauses));
        sb.append(", \"functions\": ").append(jsonPairs(functions));
        sb.append(", \"procedures\": ").append(jsonPairs(procedures));
        sb.append(", \"ranges\": ").append(jsonPairs(ranges));
        sb.append(", \"in_transactions\": ").append(inTransactions);
        sb.append(", \"nodes\": ").append(nodes);
        sb.append(", \"depth\": ").append(depth);
        sb.append(", \"subqueries\": ").append(subqueries);
        sb.append(", \"opaque\": ").append(jsonList(opaque));
        return sb.append('}').toString();
    }

    /** Children of a tree node, a Scala collection or option, a tuple, or a Java collection. */
    private static void pushChildren(ArrayDeque<Object[]> stack, Object obj, int depth, int subqueries) {
        scala.collection.Iterator<?> it;
        if (obj instanceof scala.collection.IterableOnce<?> coll) {
            it = coll.iterator();
        } else if (obj instanceof scala.Product product && !(obj instanceof InputPosition)) {
            it = product.productIterator();
        } else if (obj instanceof Iterable<?> iterable) {
            for (Object child : iterable) {
                stack.push(new Object[] {child, depth, subqueries});
            }
            return;
        } else {
            return;   // strings, numbers, positions, enums: leaves
        }
        while (it.hasNext()) {
            Object child = it.next();
            if (child != null) {
                stack.push(new Object[] {child, depth, subqueries});
            }
        }
    }

    /** "line:column" of a position in the statement, in the text as sent (after the pre-parser's options). */
    private static String where(InputPosition pos, InputPosition offset) {
        int line = pos.line() + offset.line() - 1;
        int column = pos.line() == 1 ? pos.column() + offset.column() - 1 : pos.column();
        return line + ":" + column;
    }

    private static String jsonList(Set<String> items) {
        List<String> out = new ArrayList<>();
        for (String item : new LinkedHashSet<>(items)) {
            out.add(json(item));
        }
        return "[" + String.join(", ", out) + "]";
    }

    private static String jsonPairs(List<String[]> pairs) {
        List<String> out = new ArrayList<>();
        for (String[] pair : pairs) {
            List<String> items = new ArrayList<>();
            for (String item : pair) {
                items.add(json(item));
            }
            out.add("[" + String.join(", ", items) + "]");
        }
        return "[" + String.join(", ", out) + "]";
    }

    /** A JSON string literal in ASCII: every other character as a \\u escape. */
    static String json(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
