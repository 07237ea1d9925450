// pushdown's launcher of a standalone Hive Metastore 2.3 that listens on ONE address.
//
// Hive 2.3's own main (org.apache.hadoop.hive.metastore.HiveMetaStore) always binds the
// wildcard address: it has no bind-address setting. This class builds the same Thrift
// server from the metastore's public classes (the handler with its retrying proxy, the
// processor that records the client's address, the UGI-carrying transport) but binds
// the server socket to the address it is given, 127.0.0.1 by default.
//
// Usage: java -cp CONF_DIR:JARS... LoopbackMetastore HOST PORT
//   PORT 0 picks a free port. The socket is bound first (connections wait in its backlog);
//   once the handler is initialised (the Derby schema exists), one line "pushdown-metastore: listening on HOST:PORT" is
//   printed on stdout; the launcher in Python waits for it.
//
// With -Dpushdown.exitOnStdinEof=true it also ends when its standard input reaches end of
// file: the launcher in Python holds the other end of that pipe, so a parent that dies
// (even by SIGKILL) takes the metastore with it instead of leaving an orphan JVM.
//
// Compiled at run time by pushdown_lab.metastore against pyspark's jars (no build step).

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.IHMSHandler;
import org.apache.hadoop.hive.metastore.TSetIpAddressProcessor;
import org.apache.hadoop.hive.thrift.TUGIContainingTransport;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;

public final class LoopbackMetastore {
    private LoopbackMetastore() {}

    public static void main(String[] args) throws Throwable {
        if (args.length != 2) {
            System.err.println("usage: LoopbackMetastore HOST PORT");
            System.exit(64);
        }
        InetAddress host = InetAddress.getByName(args[0]);
        int port = Integer.parseInt(args[1]);

        // Bind first: a taken port or a foreign address fails at once, before the schema work.
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(host, port), 128);
        TServerSocket transport = new TServerSocket(socket);

        HiveConf conf = new HiveConf(HiveMetaStore.HMSHandler.class);
        HiveMetaStore.HMSHandler base =
            new HiveMetaStore.HMSHandler("new db based metaserver", conf, false);
        IHMSHandler handler = HiveMetaStore.newRetryingHMSHandler(base, conf);

        TThreadPoolServer.Args serverArgs = new TThreadPoolServer.Args(transport)
            .processor(new TSetIpAddressProcessor<IHMSHandler>(handler))
            .transportFactory(new TUGIContainingTransport.Factory())
            .protocolFactory(new TBinaryProtocol.Factory())
            .inputProtocolFactory(new TBinaryProtocol.Factory(true, true))
            .minWorkerThreads(conf.getIntVar(HiveConf.ConfVars.METASTORESERVERMINTHREADS))
            .maxWorkerThreads(conf.getIntVar(HiveConf.ConfVars.METASTORESERVERMAXTHREADS));
        TServer server = new TThreadPoolServer(serverArgs);

        Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
        if (Boolean.getBoolean("pushdown.exitOnStdinEof")) {
            Thread watch = new Thread(LoopbackMetastore::exitOnStdinEof, "pushdown-parent-watch");
            watch.setDaemon(true);
            watch.start();
        }
        System.out.println("pushdown-metastore: listening on "
            + socket.getInetAddress().getHostAddress() + ":" + socket.getLocalPort());
        System.out.flush();
        server.serve();
    }

    /** Read standard input until it ends (the parent closed it, or died), then exit. */
    private static void exitOnStdinEof() {
        byte[] buffer = new byte[256];
        try {
            while (System.in.read(buffer) != -1) {
                // nothing is sent on this pipe; it only tells that the parent is alive
            }
        } catch (java.io.IOException ignored) {
            // a broken pipe means the same as end of file
        }
        System.err.println("pushdown-metastore: the launching process is gone; exiting");
        System.exit(0);
    }
}
