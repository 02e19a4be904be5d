import java.nio.file.Path;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts Neo4j Community (embedded DBMS with Bolt and, if enabled, HTTP + Browser) from {@code <home>/conf/neo4j.conf}.
 *
 * <p>Usage: {@code java -cp <runtime>/classes:<runtime>/lib/* Neo4jLauncher <home>}. Every setting lives in the
 * conf file written by graphlink/store/server.py, so this class stays version-agnostic. Prints {@code NEO4J_READY}
 * once the default database answers a query. SIGTERM / Ctrl-C run the shutdown hook, which shuts the DBMS down
 * cleanly (store files are consistent afterwards). With {@code -Dneo4j.exitOnStdinEof=true} it also exits cleanly when
 * its stdin closes, so a test process that dies never leaves an orphan JVM.
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(args.length > 0 ? args[0] : "neo4j-home").toAbsolutePath();
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(home.resolve("conf/neo4j.conf"))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J_STOPPING");
            System.out.flush();
            dbms.shutdown();
            System.out.println("NEO4J_STOPPED");
            System.out.flush();
        }, "neo4j-shutdown"));
        dbms.database("neo4j").executeTransactionally("RETURN 1");
        System.out.println("NEO4J_READY");
        System.out.flush();
        if (Boolean.getBoolean("neo4j.exitOnStdinEof")) {
            while (System.in.read() != -1) {
                // wait for the parent to close our stdin (or die)
            }
            System.exit(0);  // runs the shutdown hook
        }
        Thread.currentThread().join();
    }
}
