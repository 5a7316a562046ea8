package referent.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Runs a local Neo4j 5.26 (Community, embedded) with Bolt on 127.0.0.1 only.
 *
 * <p>It is Referent's development, demo and test database: {@code api/local_neo4j.py}
 * builds this program with Maven, starts it detached and stops it with SIGTERM.
 * Nothing but Bolt is opened (no HTTP, no routing connector), and only on loopback.
 *
 * <p>Usage: {@code Launcher --port PORT --data-dir DIR [--user NAME] [--page-cache-mib N]}.
 * The password is read from the environment variable {@value #PASSWORD_ENV} (default
 * {@value #DEFAULT_PASSWORD}) so that it does not show in the process list. Auth is on:
 * at every start the user is created or its password set, with no change required,
 * so clients log in with exactly the configured credentials.
 *
 * <p>Output: Neo4j's user log on stdout, then one line {@code ready bolt://127.0.0.1:PORT}
 * once Bolt accepts the configured credentials. SIGTERM shuts the databases down cleanly (a shutdown
 * hook); the exit status is then 143. Exit status 1 means Neo4j failed to start,
 * 2 that the arguments were wrong.
 */
public final class Launcher {

    static final String PASSWORD_ENV = "REFERENT_NEO4J_LAUNCHER_PASSWORD";
    static final String DEFAULT_PASSWORD = "referent-dev";
    static final String DEFAULT_USER = "neo4j";
    static final long DEFAULT_PAGE_CACHE_MIB = 128;

    private Launcher() {
    }

    public static void main(String[] args) {
        Integer port = null;
        Path dataDir = null;
        String user = DEFAULT_USER;
        long pageCacheMib = DEFAULT_PAGE_CACHE_MIB;
        try {
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--port" -> port = Integer.parseInt(value(args, ++i, arg));
                    case "--data-dir" -> dataDir = Path.of(value(args, ++i, arg)).toAbsolutePath();
                    case "--user" -> user = value(args, ++i, arg);
                    case "--page-cache-mib" -> pageCacheMib = Long.parseLong(value(args, ++i, arg));
                    default -> throw new IllegalArgumentException("unknown argument: " + arg);
                }
            }
            if (port == null || dataDir == null) {
                throw new IllegalArgumentException("--port and --data-dir are required");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("--port must be 1..65535, got " + port);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("usage: Launcher --port PORT --data-dir DIR [--user NAME] "
                    + "[--page-cache-mib N]: " + e.getMessage());
            System.exit(2);
            return;
        }
        String password = System.getenv().getOrDefault(PASSWORD_ENV, DEFAULT_PASSWORD);
        if (password.isEmpty()) {
            System.err.println(PASSWORD_ENV + " is set but empty");
            System.exit(2);
        }

        DatabaseManagementService service;
        try {
            Files.createDirectories(dataDir);
            service = new DatabaseManagementServiceBuilder(dataDir)
                    .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                    .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                    .setConfig(HttpConnector.enabled, false)
                    .setConfig(HttpsConnector.enabled, false)
                    // The routing connector would listen on :7688 of every interface.
                    .setConfig(GraphDatabaseSettings.routing_enabled, false)
                    .setConfig(GraphDatabaseSettings.auth_enabled, true)
                    // No usage reports: a dev database has no business calling out.
                    .setConfig(GraphDatabaseSettings.udc_enabled, false)
                    // Small footprint: a dev/test database on a laptop or a CI box.
                    .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMib))
                    .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                    .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(32))
                    // Netty's default quiet period makes every stop wait seconds for nothing
                    // (the databases are already shut down by then).
                    .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                    .build();
        } catch (Throwable e) {
            System.err.println("Neo4j failed to start: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("stopping");
            System.out.flush();
            try {
                service.shutdown();
            } finally {
                System.out.println("stopped");
                System.out.flush();
                stopped.countDown();
            }
        }, "referent-neo4j-shutdown"));

        try {
            setCredentials(service, user, password);
        } catch (Throwable e) {
            System.err.println("could not set the credentials of user '" + user + "': " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }

        System.out.println("ready bolt://127.0.0.1:" + port);
        System.out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Creates {@code user} or resets its password, so login works with exactly these credentials. */
    private static void setCredentials(DatabaseManagementService service, String user, String password) {
        var system = service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        Map<String, Object> params = Map.of("user", user, "password", password);
        system.executeTransactionally(
                "CREATE USER $user IF NOT EXISTS SET PASSWORD $password CHANGE NOT REQUIRED", params);
        try {
            system.executeTransactionally(
                    "ALTER USER $user SET PASSWORD $password CHANGE NOT REQUIRED", params);
        } catch (RuntimeException e) {
            // Neo4j refuses to "change" a password to the one it already has: nothing to do.
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }
}
